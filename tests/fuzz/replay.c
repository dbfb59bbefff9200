/* The main of a fuzz target in builds without libFuzzer (the sanitize build's fuzz.replay
 * tests): runs the target once on every file named, or in a folder named, and prints how many
 * it ran. A crash, a sanitizer report or a failed check ends it as libFuzzer would. */
#define _POSIX_C_SOURCE 200809L /* scandir */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  unsigned char *data;
  long size;
  if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    if (f)
      fclose(f);
    return -1;
  }
  data = (unsigned char *)malloc(size ? (size_t)size : 1);
  if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    free(data);
    fclose(f);
    return -1;
  }
  fclose(f);
  /* A copy of exactly the input's size, so that reading past it is caught. */
  LLVMFuzzerTestOneInput(data, (size_t)size);
  free(data);
  return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv) {
  int i, ran = 0;
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  for (i = 1; i < argc; ++i) {
    struct stat st;
    struct dirent **names;
    int n, k;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[i]) != 0)
        return 1;
      ++ran;
      continue;
    }
    n = scandir(argv[i], &names, NULL, by_name);
    if (n < 0) {
      fprintf(stderr, "replay: cannot list %s\n", argv[i]);
      return 1;
    }
    for (k = 0; k < n; ++k) {
      char path[4096];
      if (names[k]->d_name[0] != '.') {
        snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
        if (run_file(path) != 0)
          return 1;
        ++ran;
      }
      free(names[k]);
    }
    free(names);
  }
  printf("replay: ran %d inputs\n", ran);
  return 0;
}
