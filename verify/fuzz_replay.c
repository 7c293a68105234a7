// SPDX-License-Identifier: MIT
/*
 * fuzz_replay - main() for a libFuzzer target built without libFuzzer
 * (gcc, the sanitizers, make check): runs LLVMFuzzerTestOneInput() on
 * every file named on the command line, and on every file of a directory
 * named there (its kept corpus, verify/corpus/<harness>/), then says how
 * many.  A finding aborts, as under libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned runs;

static void run_path(const char *path)
{
	struct stat st;
	uint8_t *buf;
	size_t n;
	FILE *f;

	if (stat(path, &st)) {
		perror(path);
		exit(2);
	}
	if (S_ISDIR(st.st_mode)) {
		struct dirent **ents;
		char sub[4096];
		int i, k = scandir(path, &ents, NULL, alphasort);

		if (k < 0) {
			perror(path);
			exit(2);
		}
		for (i = 0; i < k; i++) {
			if (ents[i]->d_name[0] != '.') {
				snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name);
				run_path(sub);
			}
			free(ents[i]);
		}
		free(ents);
		return;
	}
	f = fopen(path, "rb");
	buf = malloc((size_t)st.st_size + 1);
	if (!f || !buf) {
		perror(path);
		exit(2);
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	runs++;
}

int main(int argc, char **argv)
{
	int a;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (a = 1; a < argc; a++)
		run_path(argv[a]);
	if (!runs) {
		fprintf(stderr, "%s: no inputs\n", argv[0]);
		return 1;	/* an empty corpus replays nothing: a failure, not a pass */
	}
	printf("%s: %u inputs, no finding\n", argv[0], runs);
	return 0;
}
