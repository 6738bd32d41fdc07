/* Whole files by path through the C API (gc_file_seal_path / gc_file_open_path, format.hpp
 * AtomicOutput), run by ctest in a fresh temporary directory of its own:
 *  - a round trip gives the plaintext back; a new output is mode 0600, a replaced one keeps its mode;
 *  - overwrite = 0 refuses an existing output (GC_ERROR_IO, its contents intact);
 *  - an output that is the input (also through a symlink) is GC_ERROR_ARGUMENT, the input intact;
 *  - a wrong key or a flipped byte leaves no output at all (and an existing one as it was), the
 *    message naming the input as given;
 *  - a missing directory is GC_ERROR_IO naming the output as given;
 *  - no temporary file (.NAME.*.gpucrypt-tmp) is ever left in the directory.
 * Prints one line per failure and exits 1 if any. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c_check.h"
#include "gpucrypt/gpucrypt.h"

static const uint8_t key[GC_FILE_KEY_LEN] = {1, 2, 3};
static const uint8_t other_key[GC_FILE_KEY_LEN] = {4, 5, 6};

static void write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "wb");
  if (!f) abort();
  fputs(text, f);
  fclose(f);
}

/* The file's first bytes as text ("" when it does not exist). */
static const char* contents(const char* path) {
  static char buffer[4096];
  buffer[0] = 0;
  FILE* f = fopen(path, "rb");
  if (!f) return buffer;
  buffer[fread(buffer, 1, sizeof buffer - 1, f)] = 0;
  fclose(f);
  return buffer;
}

static int exists(const char* path) { return access(path, F_OK) == 0; }

static int mode_of(const char* path) {
  struct stat s;
  return stat(path, &s) == 0 ? (int)(s.st_mode & 07777) : -1;
}

static int temporaries_left(void) {
  int count = 0;
  DIR* d = opendir(".");
  struct dirent* e;
  while ((e = readdir(d)) != NULL) count += strstr(e->d_name, ".gpucrypt-tmp") != NULL;
  closedir(d);
  return count;
}

int main(void) {
  char directory[] = "/tmp/c_api_paths.XXXXXX";
  if (!mkdtemp(directory) || chdir(directory) != 0) abort();
  umask(022);
  const char* plain = "the plaintext, more than one chunk of sixteen bytes long";
  write_file("plain", plain);

  CHECK(gc_file_seal_path("plain", "sealed", key, sizeof key, 16, NULL, NULL, 0) == GC_OK, "seal");
  CHECK(mode_of("sealed") == 0600, "a new output is 0600, got %o", mode_of("sealed"));
  CHECK(gc_file_open_path("sealed", "opened", key, sizeof key, NULL, NULL, 0) == GC_OK, "open");
  CHECK(strcmp(contents("opened"), plain) == 0, "round trip gave '%s'", contents("opened"));

  write_file("existing", "old contents");
  chmod("existing", 0640);
  CHECK(gc_file_open_path("sealed", "existing", key, sizeof key, NULL, NULL, 0) == GC_ERROR_IO, "no overwrite");
  CHECK(strstr(gc_last_error(), "existing: File exists") != NULL, "names the output: %s", gc_last_error());
  CHECK(strcmp(contents("existing"), "old contents") == 0, "existing output kept");
  CHECK(gc_file_open_path("sealed", "existing", key, sizeof key, NULL, NULL, 1) == GC_OK, "overwrite");
  CHECK(strcmp(contents("existing"), plain) == 0, "overwritten with the plaintext");
  CHECK(mode_of("existing") == 0640, "a replaced file keeps its mode, got %o", mode_of("existing"));

  if (symlink("plain", "link-to-plain") != 0) abort();
  CHECK(gc_file_seal_path("plain", "link-to-plain", key, sizeof key, 16, NULL, NULL, 1) == GC_ERROR_ARGUMENT,
        "output through a link to the input");
  CHECK(strstr(gc_last_error(), "link-to-plain: the output would overwrite the input") != NULL, "%s",
        gc_last_error());
  CHECK(strcmp(contents("plain"), plain) == 0, "input intact");

  write_file("kept", "kept contents");
  CHECK(gc_file_open_path("sealed", "kept", other_key, sizeof other_key, NULL, NULL, 1) == GC_ERROR_AUTHENTICATION,
        "wrong key");
  CHECK(strncmp(gc_last_error(), "wrong passphrase or key for sealed", 34) == 0, "names the input: %s",
        gc_last_error());
  CHECK(strcmp(contents("kept"), "kept contents") == 0, "a wrong key leaves the old output");
  CHECK(gc_file_open_path("sealed", "none", other_key, sizeof other_key, NULL, NULL, 0) == GC_ERROR_AUTHENTICATION,
        "wrong key, new output");
  CHECK(!exists("none"), "a wrong key leaves no output");

  FILE* f = fopen("sealed", "r+b");
  fseek(f, 90, SEEK_SET);
  int byte = fgetc(f);
  fseek(f, 90, SEEK_SET);
  fputc(byte ^ 1, f);
  fclose(f);
  CHECK(gc_file_open_path("sealed", "flipped", key, sizeof key, NULL, NULL, 0) == GC_ERROR_AUTHENTICATION,
        "flipped byte");
  CHECK(strncmp(gc_last_error(), "sealed: chunk 0", 15) == 0, "names the input and chunk: %s", gc_last_error());
  CHECK(!exists("flipped"), "no plaintext of a rejected file");

  CHECK(gc_file_open_path("plain", "notours", key, sizeof key, NULL, NULL, 0) != GC_OK, "not a gpucrypt file");
  CHECK(strncmp(gc_last_error(), "plain: not a gpucrypt file", 26) == 0, "a header error names the input: %s",
        gc_last_error());
  CHECK(!exists("notours"), "no output for a file that is not ours");

  CHECK(gc_file_seal_path("plain", "no-such-dir/out", key, sizeof key, 16, NULL, NULL, 0) == GC_ERROR_IO,
        "missing directory");
  CHECK(strncmp(gc_last_error(), "no-such-dir/out: No such file", 29) == 0, "%s", gc_last_error());
  CHECK(gc_file_seal_path("absent", "out", key, sizeof key, 16, NULL, NULL, 0) == GC_ERROR_IO, "missing input");
  CHECK(strncmp(gc_last_error(), "absent: No such file", 20) == 0, "%s", gc_last_error());

  CHECK(temporaries_left() == 0, "%d temporary files left", temporaries_left());
  if (system("rm -rf -- \"$PWD\"") != 0) fprintf(stderr, "could not remove %s\n", directory);
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
