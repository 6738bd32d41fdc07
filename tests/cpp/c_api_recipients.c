/* c_api_recipients.c: format version 2 through the C API (issue 36): the published vectors
 * (tests/vectors/gcx-v2, written by the Python package) open with gc_file_opener_new_identities, the
 * refusals give their status, and a file sealed here to a recipient opens again; the same through
 * the whole-descriptor calls gc_file_seal_fd_recipients / gc_file_open_fd_identities, between
 * regular files (the positional file pipeline) and from a pipe (the streaming path). With a second
 * argument it also writes the handle-sealed file there (so the Python package can be shown to open it).
 * Usage: c_api_recipients VECTOR_DIR [SEALED_OUT] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c_check.h"
#include "gpucrypt/gpucrypt.h"

static char* slurp(const char* dir, const char* name, size_t* len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc((size_t)size + 1);
  if (fread(data, 1, (size_t)size, f) != (size_t)size) exit(2);
  fclose(f);
  data[size] = 0;
  *len = (size_t)size;
  return data;
}

/* Opens `file` with `identity` fed in pieces of `step` bytes; returns the status, the plaintext in *plain. */
static gc_status open_all(const char* identity, const unsigned char* file, size_t len, size_t step, unsigned char* plain,
                          size_t* plain_len) {
  gc_file_opener* opener = NULL;
  const char* identities[] = {identity};
  gc_status status = gc_file_opener_new_identities(&opener, identities, 1, NULL, NULL);
  if (status != GC_OK) return status;
  *plain_len = 0;
  for (size_t at = 0; at < len && status == GC_OK; at += step) {
    const uint8_t* out;
    size_t out_len;
    status = gc_file_opener_update(opener, file + at, at + step <= len ? step : len - at, &out, &out_len);
    if (status == GC_OK && out_len > 0) { /* *out may be NULL when there is nothing */
      memcpy(plain + *plain_len, out, out_len);
      *plain_len += out_len;
    }
  }
  if (status == GC_OK) {
    const uint8_t* out;
    size_t out_len;
    status = gc_file_opener_finish(opener, &out, &out_len);
    if (status == GC_OK && out_len > 0) { /* *out may be NULL when there is nothing */
      memcpy(plain + *plain_len, out, out_len);
      *plain_len += out_len;
    }
  }
  gc_file_opener_free(opener);
  return status;
}

/* A descriptor of a fresh anonymous regular file. */
static int temp_fd(void) {
  FILE* f = tmpfile();
  int fd = f ? dup(fileno(f)) : -1;
  if (f) fclose(f);
  if (fd < 0) exit(2);
  return fd;
}

/* A descriptor holding `data`, positioned at its start: a regular file (tmpfile) or, with
 * use_pipe, the read end of a pipe whose write end is closed (the data fits the pipe's buffer). */
static int source_fd(const void* data, size_t len, int use_pipe) {
  int fd;
  if (use_pipe) {
    int ends[2];
    if (pipe(ends) != 0 || write(ends[1], data, len) != (ssize_t)len) exit(2);
    close(ends[1]);
    return ends[0];
  }
  fd = temp_fd();
  if ( write(fd, data, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0) exit(2);
  return fd;
}

/* An empty regular file to write to. */
static int sink_fd(void) { return temp_fd(); }

/* The whole content of a regular file (up to cap bytes) into buf; returns its length. */
static size_t fd_content(int fd, unsigned char* buf, size_t cap) {
  ssize_t n = pread(fd, buf, cap, 0);
  if (n < 0) exit(2);
  return (size_t)n;
}

/* Opens `file` with `identity` through gc_file_open_fd_identities; the plaintext in *plain. */
static gc_status open_fd_all(const char* identity, const unsigned char* file, size_t len, size_t use_pipe,
                             unsigned char* plain, size_t* plain_len) {
  int in = source_fd(file, len, (int)use_pipe), out = sink_fd();
  const char* identities[] = {identity};
  gc_status status = gc_file_open_fd_identities(in, out, identities, 1, NULL, NULL);
  *plain_len = fd_content(out, plain, 1 << 20);
  if (status == GC_OK && lseek(out, 0, SEEK_CUR) != (off_t)*plain_len) {
    fprintf(stderr, "FAIL: open_fd_identities left the output at %ld, not after its %zu bytes\n",
            (long)lseek(out, 0, SEEK_CUR), *plain_len);
    ++failures;
  }
  close(in);
  close(out);
  return status;
}

/* The vectors every opener refuses, with the status and words of each, and no plaintext. */
static const struct {
  const char* file;
  gc_status status;
  const char* words;
} refusals[] = {{"wrong-identity.gcx", GC_ERROR_AUTHENTICATION, "no identity given matches"},
                {"swapped-stanzas.gcx", GC_ERROR_AUTHENTICATION, "header authentication failed"},
                {"copied-stanza.gcx", GC_ERROR_AUTHENTICATION, "header authentication failed"},
                {"unknown-stanza.gcx", GC_ERROR_FORMAT, "unknown type 200"},
                {"truncated-header.gcx", GC_ERROR_FORMAT, "truncated inside the header"},
                {"key-file.gcx", GC_ERROR_AUTHENTICATION, "its stanzas: key-file"},
                {"mlkem768x25519.gcx", GC_ERROR_AUTHENTICATION, "no identity given matches"}};

typedef gc_status (*open_fn)(const char* identity, const unsigned char* file, size_t len, size_t how,
                             unsigned char* plain, size_t* plain_len);

/* Runs the refusals through `open` (open_all with `how` its step, or open_fd_all with `how` 1 for a
 * pipe); wrong-identity.gcx is opened with `other`, the rest with `identity`. */
static void check_refusals(const char* dir, const char* identity, const char* other, open_fn open, size_t how,
                           const char* what, unsigned char* plain) {
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; ++i) {
    size_t len, plain_len;
    unsigned char* file = (unsigned char*)slurp(dir, refusals[i].file, &len);
    const char* opener_identity = strcmp(refusals[i].file, "wrong-identity.gcx") == 0 ? other : identity;
    gc_status status = open(opener_identity, file, len, how, plain, &plain_len);
    CHECK(status == refusals[i].status && plain_len == 0 && strstr(gc_last_error(), refusals[i].words),
          "%s %s (%zu): status %d, %zu bytes", what, refusals[i].file, how, (int)status, plain_len);
    free(file);
  }
}

/* The recipient line of an identity file ("# recipient: gpucrypt-x25519:..."). */
static char* recipient_of(char* identity_file) {
  char* at = strstr(identity_file, "# recipient: ");
  if (!at) exit(2);
  at += strlen("# recipient: ");
  char* end = strchr(at, '\n');
  size_t n = (size_t)(end - at);
  char* recipient = malloc(n + 1);
  memcpy(recipient, at, n);
  recipient[n] = 0;
  return recipient;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s VECTOR_DIR [SEALED_OUT]\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  size_t len, id_len, other_len, pq_len, hello_len, long_len, plain_len;
  char* identity = slurp(dir, "x25519.identity", &id_len);
  char* other = slurp(dir, "x25519-other.identity", &other_len);
  char* pq = slurp(dir, "mlkem768x25519.identity", &pq_len);
  char* hello = slurp(dir, "hello.txt", &hello_len);
  char* long_text = slurp(dir, "long.txt", &long_len);
  unsigned char* plain = malloc(1 << 20);

  /* The vectors the Python package wrote, fed whole and one byte at a time. */
  static const struct {
    const char* file;
    size_t step;
    int is_long;
  } good[] = {{"x25519.gcx", 1 << 20, 0}, {"x25519.gcx", 1, 0}, {"multi-chunk.gcx", 7, 1}, {"mixed.gcx", 1 << 20, 1}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
    unsigned char* file = (unsigned char*)slurp(dir, good[i].file, &len);
    gc_status status = open_all(identity, file, len, good[i].step, plain, &plain_len);
    const char* expected = good[i].is_long ? long_text : hello;
    size_t expected_len = good[i].is_long ? long_len : hello_len;
    CHECK(status == GC_OK && plain_len == expected_len && memcmp(plain, expected, expected_len) == 0,
          "%s (step %zu): status %d, %zu bytes", good[i].file, good[i].step, (int)status, plain_len);
    free(file);
  }

  /* The refusals, with the status each one gives. */
  check_refusals(dir, identity, other, open_all, 1 << 20, "opener", plain);
  unsigned char* truncated = (unsigned char*)slurp(dir, "truncated-header.gcx", &len);
  gc_status status = open_all(identity, truncated, len, 1 << 20, plain, &plain_len);
  CHECK(status == GC_ERROR_FORMAT && plain_len == 0 && strstr(gc_last_error(), "truncated inside the header (88 of 163"),
        "truncated-header.gcx: status %d", (int)status);
  free(truncated);

  /* The hybrid needs OpenSSL 3.5's ML-KEM: refused by name, as recipient and as identity. */
  gc_file_opener* opener = NULL;
  const char* pq_identities[] = {pq};
  CHECK(gc_file_opener_new_identities(&opener, pq_identities, 1, NULL, NULL) == GC_OK, "hybrid opener handle");
  unsigned char* pq_file = (unsigned char*)slurp(dir, "mlkem768x25519.gcx", &len);
  const uint8_t* out;
  size_t out_len;
  status = gc_file_opener_update(opener, pq_file, len, &out, &out_len);
  CHECK(status == GC_ERROR_FORMAT && strstr(gc_last_error(), "OpenSSL 3.5"), "hybrid identity: status %d", (int)status);
  gc_file_opener_free(opener);
  free(pq_file);
  char* pq_recipient = recipient_of(pq);
  gc_file_sealer* sealer = NULL;
  const char* pq_recipients[] = {pq_recipient};
  status = gc_file_sealer_new_recipients(&sealer, pq_recipients, 1, 0, NULL, NULL);
  CHECK(status == GC_ERROR_FORMAT && strstr(gc_last_error(), "OpenSSL 3.5") && sealer == NULL, "hybrid recipient");

  /* Seal to two recipients here, open with either; a wrong checksum is refused. */
  char* recipient = recipient_of(identity);
  char* other_recipient = recipient_of(other);
  const char* recipients[] = {other_recipient, recipient};
  CHECK(gc_file_sealer_new_recipients(&sealer, recipients, 2, 16, NULL, NULL) == GC_OK, "sealer");
  size_t header_len = gc_file_sealer_header_len(sealer);
  CHECK(header_len == 48 + 2 * 83 + 32, "header length %zu", header_len);
  unsigned char* sealed = malloc(1 << 20);
  memcpy(sealed, gc_file_sealer_header(sealer), header_len);
  size_t sealed_len = header_len;
  CHECK(gc_file_sealer_update(sealer, (const uint8_t*)long_text, long_len, &out, &out_len) == GC_OK, "update");
  memcpy(sealed + sealed_len, out, out_len);
  sealed_len += out_len;
  CHECK(gc_file_sealer_finish(sealer, &out, &out_len) == GC_OK, "finish");
  memcpy(sealed + sealed_len, out, out_len);
  sealed_len += out_len;
  gc_file_sealer_free(sealer);
  for (int which = 0; which < 2; ++which) {
    status = open_all(which ? identity : other, sealed, sealed_len, 5, plain, &plain_len);
    CHECK(status == GC_OK && plain_len == long_len && memcmp(plain, long_text, long_len) == 0, "round trip %d", which);
  }
  if (argc > 2) {
    FILE* f = fopen(argv[2], "wb");
    CHECK(f && fwrite(sealed, 1, sealed_len, f) == sealed_len && fclose(f) == 0, "writing %s", argv[2]);
  }
  /* Whole descriptors: the vectors open, between regular files and from a pipe. */
  for (int use_pipe = 0; use_pipe < 2; ++use_pipe) {
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
      unsigned char* file = (unsigned char*)slurp(dir, good[i].file, &len);
      status = open_fd_all(identity, file, len, use_pipe, plain, &plain_len);
      const char* expected = good[i].is_long ? long_text : hello;
      size_t expected_len = good[i].is_long ? long_len : hello_len;
      CHECK(status == GC_OK && plain_len == expected_len && memcmp(plain, expected, expected_len) == 0,
            "open_fd %s (pipe %d): status %d, %zu bytes", good[i].file, use_pipe, (int)status, plain_len);
      free(file);
    }
    /* The refusals, each with its status and no output. */
    check_refusals(dir, identity, other, open_fd_all, (size_t)use_pipe, "open_fd", plain);
    /* Sealed to two recipients by descriptor: the length the layout gives, and it opens with either
     * identity, by descriptor and through the opener handle; with a key it is refused by name. */
    int in = source_fd(long_text, long_len, use_pipe), sink = sink_fd();
    CHECK(gc_file_seal_fd_recipients(in, sink, recipients, 2, 16, NULL, NULL) == GC_OK, "seal_fd_recipients (pipe %d)",
          use_pipe);
    sealed_len = fd_content(sink, sealed, 1 << 20);
    CHECK(sealed_len == header_len + long_len + 16 * (long_len / 16 + 1) && lseek(sink, 0, SEEK_CUR) == (off_t)sealed_len,
          "seal_fd_recipients (pipe %d): %zu bytes", use_pipe, sealed_len);
    close(in);
    close(sink);
    for (int which = 0; which < 2; ++which) {
      status = open_fd_all(which ? identity : other, sealed, sealed_len, use_pipe, plain, &plain_len);
      CHECK(status == GC_OK && plain_len == long_len && memcmp(plain, long_text, long_len) == 0,
            "seal_fd / open_fd round trip %d (pipe %d)", which, use_pipe);
    }
    status = open_all(identity, sealed, sealed_len, 1 << 20, plain, &plain_len);
    CHECK(status == GC_OK && plain_len == long_len && memcmp(plain, long_text, long_len) == 0,
          "seal_fd's file through the opener handle (pipe %d)", use_pipe);
    static const uint8_t key[32] = {0};
    in = source_fd(sealed, sealed_len, use_pipe);
    sink = sink_fd();
    CHECK(gc_file_open_fd(in, sink, key, sizeof key, NULL, NULL) == GC_ERROR_FORMAT &&
              strstr(gc_last_error(), "encrypted to recipients") && fd_content(sink, plain, 1 << 20) == 0,
          "a version 2 file given a key (pipe %d)", use_pipe);
    close(in);
    close(sink);
    /* A version 1 file (sealed with a key) given identities. */
    in = source_fd(long_text, long_len, 0);
    sink = sink_fd();
    CHECK(gc_file_seal_fd(in, sink, key, sizeof key, 0, NULL, NULL) == GC_OK, "seal_fd with a key");
    sealed_len = fd_content(sink, sealed, 1 << 20);
    close(in);
    close(sink);
    status = open_fd_all(identity, sealed, sealed_len, use_pipe, plain, &plain_len);
    CHECK(status == GC_ERROR_FORMAT && plain_len == 0 && strstr(gc_last_error(), "format version 1"),
          "a version 1 file given identities (pipe %d): status %d", use_pipe, (int)status);
  }

  recipient[strlen(recipient) - 1] ^= 1;
  const char* typo[] = {recipient};
  CHECK(gc_file_sealer_new_recipients(&sealer, typo, 1, 0, NULL, NULL) == GC_ERROR_FORMAT &&
            strstr(gc_last_error(), "checksum"),
        "typo");
  CHECK(gc_file_sealer_new_recipients(&sealer, NULL, 0, 0, NULL, NULL) == GC_ERROR_FORMAT, "no recipients");
  /* A bad recipient by descriptor: refused before anything is read or written. */
  int typo_in = source_fd(long_text, long_len, 0), typo_out = sink_fd();
  CHECK(gc_file_seal_fd_recipients(typo_in, typo_out, typo, 1, 0, NULL, NULL) == GC_ERROR_FORMAT &&
            strstr(gc_last_error(), "checksum") && fd_content(typo_out, plain, 1 << 20) == 0 && lseek(typo_in, 0, SEEK_CUR) == 0,
        "seal_fd_recipients with a typo");
  CHECK(gc_file_seal_fd_recipients(typo_in, typo_out, NULL, 0, 0, NULL, NULL) == GC_ERROR_FORMAT &&
            fd_content(typo_out, plain, 1 << 20) == 0,
        "seal_fd_recipients with no recipient");
  close(typo_in);
  close(typo_out);

  free(sealed);
  free(plain);
  free(recipient);
  free(other_recipient);
  free(pq_recipient);
  free(identity);
  free(other);
  free(pq);
  free(hello);
  free(long_text);
  if (failures) fprintf(stderr, "%d failures\n", failures);
  else printf("c_api_recipients: all passed\n");
  return failures ? 1 : 0;
}
