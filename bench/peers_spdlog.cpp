// SPDX-License-Identifier: MIT
/*
 * peers_spdlog.cpp - spdlog, the C++ peer, behind a C interface.
 *
 * Sync: spdlog::basic_logger_mt, a mutex-protected file sink; each call
 * formats and writes into the sink's stdio buffer.  Async: the same sink
 * behind spdlog's thread pool (queue of 8192, one worker, block when
 * full: spdlog's defaults).  Both use spdlog's default pattern.
 */
#include <memory>

#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include "peers.h"

static std::shared_ptr<spdlog::logger> logger;

extern "C" int pkb_spdlog_open(const char *path, int async)
{
	try {
		if (async) {
			spdlog::init_thread_pool(8192, 1);
			logger = spdlog::basic_logger_mt<spdlog::async_factory>("pkbench", path, true);
		} else {
			logger = spdlog::basic_logger_mt("pkbench", path, true);
		}
	} catch (const spdlog::spdlog_ex &) {
		return -5; /* -EIO */
	}
	return 0;
}

extern "C" void pkb_spdlog_log(long a, long b)
{
	logger->info("buffer has consumed {} bytes of extra storage, current allocation: {} bytes", a, b);
}

extern "C" void pkb_spdlog_close(void)
{
	logger->flush();
	logger.reset();
	spdlog::shutdown();
}
