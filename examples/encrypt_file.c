/* encrypt_file.c: encrypt (or, with -d, decrypt) a file in the gpucrypt file format through the C
 * API, with a 32-byte key from a key file (as `gpucrypt keygen` writes: 32 raw bytes or 64 hex
 * digits). The output is what `gpucrypt encrypt --key-file KEYFILE` writes and reads.
 *
 *   encrypt_file [-d] KEYFILE INPUT OUTPUT
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

int main(int argc, char** argv) {
  int decrypt = argc == 5 && strcmp(argv[1], "-d") == 0;
  if (argc != 4 + decrypt) {
    fprintf(stderr, "usage: encrypt_file [-d] KEYFILE INPUT OUTPUT\n");
    return 2;
  }
  const char* key_path = argv[1 + decrypt];
  const char* in_path = argv[2 + decrypt];
  const char* out_path = argv[3 + decrypt];
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

  gc_file_sealer* sealer = NULL;
  gc_file_opener* opener = NULL;
  gc_status status = decrypt ? gc_file_opener_new(&opener, key, sizeof key, NULL, NULL)
                             : gc_file_sealer_new(&sealer, key, sizeof key, 0, NULL, NULL);
  memset(key, 0, sizeof key);
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
  }
  if (!failed) {
    status = decrypt ? gc_file_opener_finish(opener, &produced, &produced_len)
                     : gc_file_sealer_finish(sealer, &produced, &produced_len);
    failed = status != GC_OK || write_all(out, produced, produced_len) != 0 || fsync(out) != 0;
  }
  if (failed && status != GC_OK) fprintf(stderr, "encrypt_file: %s: %s\n", in_path, gc_last_error());
  else if (failed) fprintf(stderr, "encrypt_file: %s: %s\n", out_path, strerror(errno));
  gc_file_sealer_free(sealer);
  gc_file_opener_free(opener);
  fclose(in);
  if (close(out) != 0) failed = 1;
  if (failed) unlink(out_path); /* never leave a partial or unauthenticated output */
  memset(buffer, 0, sizeof buffer);
  return failed ? 1 : 0;
}
