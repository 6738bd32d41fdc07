/* encrypt_file.c: encrypt (or, with -d, decrypt) a file in the gpucrypt file format through the C
 * API, with a 32-byte key from a key file (as `gpucrypt keygen --symmetric` writes: 32 raw bytes or 64 hex
 * digits). The output is what `gpucrypt encrypt --key-file KEYFILE` writes and reads.
 *
 *   encrypt_file [-d] [-u] KEYFILE INPUT OUTPUT
 *
 * By default the whole file goes through the library's job pipeline (gc_file_seal_fd /
 * gc_file_open_fd: between regular files, worker threads read, seal or open, and write jobs of
 * chunks at their offsets; from a pipe, this thread reads and writes while workers seal). With -u it is fed through a sealer / opener one 1 MiB update at a time, the way to go
 * for data that does not come from a file descriptor.
 *
 * OUTPUT must not exist (it is created with mode 0600); on any failure it is removed, so a
 * partial or unauthenticated output never stays behind. Exit status 0 on success, 1 on failure,
 * 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpucrypt/gpucrypt.h"

static int read_key(const char* path, uint8_t key[GC_FILE_KEY_LEN]) {
  unsigned char buffer[256];
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "encrypt_file: %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t n = fread(buffer, 1, sizeof buffer, f);
  fclose(f);
  if (n == GC_FILE_KEY_LEN) {
    memcpy(key, buffer, GC_FILE_KEY_LEN);
    memset(buffer, 0, sizeof buffer);
    return 0;
  }
  size_t begin = 0, end = n; /* hex, surrounding whitespace ignored */
  while (begin < end && (buffer[begin] == ' ' || buffer[begin] == '\n' || buffer[begin] == '\r' || buffer[begin] == '\t')) ++begin;
  while (end > begin && (buffer[end - 1] == ' ' || buffer[end - 1] == '\n' || buffer[end - 1] == '\r' || buffer[end - 1] == '\t')) --end;
  if (end - begin != 2 * GC_FILE_KEY_LEN) {
    fprintf(stderr, "encrypt_file: %s: a key file holds 32 raw bytes or 64 hex digits\n", path);
    memset(buffer, 0, sizeof buffer);
    return -1;
  }
  for (size_t i = 0; i < GC_FILE_KEY_LEN; ++i) {
    unsigned int byte;
    char pair[3] = {(char)buffer[begin + 2 * i], (char)buffer[begin + 2 * i + 1], 0};
    char* stop;
    byte = (unsigned int)strtoul(pair, &stop, 16);
    if (*stop != 0) {
      fprintf(stderr, "encrypt_file: %s: not a hex key\n", path);
      memset(buffer, 0, sizeof buffer);
      return -1;
    }
    key[i] = (uint8_t)byte;
  }
  memset(buffer, 0, sizeof buffer);
  return 0;
}

static int write_all(int fd, const uint8_t* data, size_t len) {
  while (len > 0) {
    ssize_t written = write(fd, data, len);
    if (written < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    data += written;
    len -= (size_t)written;
  }
  return 0;
}

/* The sealer / opener loop (-u): returns 0, or -1 with the message printed. */
static int run_updates(int decrypt, const uint8_t key[GC_FILE_KEY_LEN], FILE* in, int out, const char* in_path,
                       const char* out_path) {
  gc_file_sealer* sealer = NULL;
  gc_file_opener* opener = NULL;
  gc_status status = decrypt ? gc_file_opener_new(&opener, key, GC_FILE_KEY_LEN, NULL, NULL)
                             : gc_file_sealer_new(&sealer, key, GC_FILE_KEY_LEN, 0, NULL, NULL);
  int failed = status != GC_OK;
  if (!failed && !decrypt) failed = write_all(out, gc_file_sealer_header(sealer), GC_FILE_HEADER_LEN) != 0;

  static uint8_t buffer[1 << 20];
  const uint8_t* produced;
  size_t produced_len;
  while (!failed) {
    size_t n = fread(buffer, 1, sizeof buffer, in);
    if (n == 0) break;
    status = decrypt ? gc_file_opener_update(opener, buffer, n, &produced, &produced_len)
                     : gc_file_sealer_update(sealer, buffer, n, &produced, &produced_len);
    failed = status != GC_OK || write_all(out, produced, produced_len) != 0;
  }
  if (!failed && ferror(in)) {
    fprintf(stderr, "encrypt_file: %s: read error\n", in_path);
    failed = 1;
  } else if (!failed) {
    status = decrypt ? gc_file_opener_finish(opener, &produced, &produced_len)
                     : gc_file_sealer_finish(sealer, &produced, &produced_len);
    failed = status != GC_OK || write_all(out, produced, produced_len) != 0;
  }
  if (failed && status != GC_OK) fprintf(stderr, "encrypt_file: %s: %s\n", in_path, gc_last_error());
  else if (failed && !ferror(in)) fprintf(stderr, "encrypt_file: %s: %s\n", out_path, strerror(errno));
  gc_file_sealer_free(sealer);
  gc_file_opener_free(opener);
  memset(buffer, 0, sizeof buffer);
  return failed ? -1 : 0;
}

int main(int argc, char** argv) {
  int decrypt = 0, updates = 0, arg = 1;
  for (; arg < argc && argv[arg][0] == '-' && argv[arg][1] != 0; ++arg) {
    if (strcmp(argv[arg], "-d") == 0) decrypt = 1;
    else if (strcmp(argv[arg], "-u") == 0) updates = 1;
    else break;
  }
  if (argc - arg != 3) {
    fprintf(stderr, "usage: encrypt_file [-d] [-u] KEYFILE INPUT OUTPUT\n");
    return 2;
  }
  const char* key_path = argv[arg];
  const char* in_path = argv[arg + 1];
  const char* out_path = argv[arg + 2];
  uint8_t key[GC_FILE_KEY_LEN];
  if (read_key(key_path, key) != 0) return 1;
  FILE* in = fopen(in_path, "rb");
  if (!in) {
    fprintf(stderr, "encrypt_file: %s: %s\n", in_path, strerror(errno));
    return 1;
  }
  int out = open(out_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (out < 0) {
    fprintf(stderr, "encrypt_file: %s: %s\n", out_path, strerror(errno));
    fclose(in);
    return 1;
  }

  int failed;
  if (updates) {
    failed = run_updates(decrypt, key, in, out, in_path, out_path) != 0;
  } else {
    gc_status status = decrypt ? gc_file_open_fd(fileno(in), out, key, sizeof key, NULL, NULL)
                               : gc_file_seal_fd(fileno(in), out, key, sizeof key, 0, NULL, NULL);
    failed = status != GC_OK;
    /* An I/O error's message says which side failed ("reading the input: ...", "writing the output: ..."). */
    const char* named = status == GC_ERROR_IO && strncmp(gc_last_error(), "writing", 7) == 0 ? out_path : in_path;
    if (failed) fprintf(stderr, "encrypt_file: %s: %s\n", named, gc_last_error());
  }
  memset(key, 0, sizeof key);
  if (!failed && fsync(out) != 0) {
    fprintf(stderr, "encrypt_file: %s: %s\n", out_path, strerror(errno));
    failed = 1;
  }
  fclose(in);
  if (close(out) != 0) failed = 1;
  if (failed) unlink(out_path); /* never leave a partial or unauthenticated output */
  return failed ? 1 : 0;
}
