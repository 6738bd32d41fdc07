/* The C API's edge cases (include/gpucrypt/gpucrypt.h), run by ctest and, built with
 * GPUCRYPT_SANITIZE=address,undefined, by scripts/test, where any finding aborts:
 *  - a file sealer / opener fed its own previous output (*out, valid until the next call) is
 *    refused with GC_ERROR_ARGUMENT (it read freed memory, or zeros);
 *  - NULL pointers with length 0 where the header allows them: gc_aead_open(out=NULL) of an empty
 *    message, gc_aead_seal(in=NULL), gc_cipher_update(NULL, NULL, 0), gc_hash(NULL, 0), and files
 *    whose final chunk is empty (memcpy(NULL, .., 0) was undefined behaviour inside);
 *  - an unknown or absent device is refused by gc_file_sealer_new / gc_file_opener_new /
 *    gc_file_seal_fd / gc_file_open_fd with the device's own reason, not at the first update;
 *  - gc_cipher_update_units (XTS data units) gives what one handle per unit gives, the unit's
 *    number as its tweak, also past 2^64, and refuses lengths and modes it does not take.
 * Prints one line per failure and exits 1 if any. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"
#include "gpucrypt/gpucrypt.h"

static uint8_t key[GC_FILE_KEY_LEN];

/* ---- NULL with length 0 through every GCM implementation ---------------------------------- */

static void aead_empty_messages(const char* name, const char* device, const char* variant) {
  gc_aead* aead = NULL;
  const size_t key_len = strstr(name, "-256-") ? 32 : 16;
  if (gc_aead_new(&aead, name, key, key_len, device, variant) != GC_OK) {
    printf("skipped %s %s %s: %s\n", name, device, variant ? variant : "(default)", gc_last_error());
    return;
  }
  const uint8_t nonce[12] = {1};
  uint8_t tag[16];
  CHECK(gc_aead_seal(aead, nonce, sizeof nonce, NULL, 0, NULL, 0, sizeof tag, tag) == GC_OK, "%s %s seal(in=NULL, 0)",
        name, device);
  /* The header allows out == NULL when len == tag_len: nothing to write. */
  CHECK(gc_aead_open(aead, nonce, sizeof nonce, NULL, 0, tag, sizeof tag, sizeof tag, NULL) == GC_OK,
        "%s %s open(out=NULL) of an empty message", name, device);
  tag[0] ^= 1;
  CHECK(gc_aead_open(aead, nonce, sizeof nonce, NULL, 0, tag, sizeof tag, sizeof tag, NULL) == GC_ERROR_AUTHENTICATION,
        "%s %s open(out=NULL) with a wrong tag", name, device);
  gc_aead_free(aead);
}

static void cipher_empty_updates(const char* device) {
  static const char* const names[] = {"aes-128-ecb", "aes-128-cbc", "aes-128-ctr", "camellia-128-cfb", "sc2000-128-ofb"};
  const uint8_t iv[16] = {0};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    gc_cipher* cipher = NULL;
    const int ecb = strstr(names[i], "ecb") != NULL;
    if (gc_cipher_new(&cipher, names[i], 1, key, 16, ecb ? NULL : iv, ecb ? 0 : 16, device, NULL) != GC_OK) {
      printf("skipped %s on %s: %s\n", names[i], device, gc_last_error());
      continue;
    }
    CHECK(gc_cipher_update(cipher, NULL, NULL, 0) == GC_OK, "%s on %s: update(NULL, NULL, 0)", names[i], device);
    gc_cipher_free(cipher);
  }
}

/* ---- XTS data units: one call against a handle per unit (its tweak the unit's number) ------- */

static void xts_units_match_single_units(const char* device) {
  enum { kUnit = 512, kUnits = 3 };
  const uint64_t first_unit = UINT64_MAX - 1; /* the third unit's number is 2^64: a carry into byte 8 */
  uint8_t plain[kUnit * kUnits], units_out[kUnit * kUnits], single_out[kUnit * kUnits];
  for (size_t i = 0; i < sizeof plain; ++i) plain[i] = (uint8_t)(i * 7 + 3);
  const uint8_t zero_tweak[16] = {0};
  gc_cipher* units = NULL;
  if (gc_cipher_new(&units, "aes-128-xts", 1, key, 32, zero_tweak, 16, device, NULL) != GC_OK) {
    printf("skipped xts units on %s: %s\n", device, gc_last_error());
    return;
  }
  CHECK(gc_cipher_update_units(units, plain, units_out, sizeof plain, kUnit, first_unit) == GC_OK, "units on %s", device);
  for (int u = 0; u < kUnits; ++u) {
    uint8_t tweak[16] = {0};
    const uint64_t n = first_unit + (uint64_t)u;
    for (int b = 0; b < 8; ++b) tweak[b] = (uint8_t)(n >> (8 * b));
    tweak[8] = n < first_unit ? 1 : 0;
    gc_cipher* single = NULL;
    CHECK(gc_cipher_new(&single, "aes-128-xts", 1, key, 32, tweak, 16, device, NULL) == GC_OK, "unit %d", u);
    CHECK(gc_cipher_update(single, plain + u * kUnit, single_out + u * kUnit, kUnit) == GC_OK, "unit %d", u);
    gc_cipher_free(single);
  }
  CHECK(memcmp(units_out, single_out, sizeof plain) == 0, "units on %s differ from one handle per unit", device);
  CHECK(gc_cipher_update_units(units, plain, units_out, 1000, kUnit, 0) == GC_ERROR_ARGUMENT,
        "1000 bytes of 512-byte units on %s", device);
  CHECK(gc_cipher_update_units(units, NULL, NULL, 0, kUnit, 0) == GC_OK, "no units on %s", device);
  gc_cipher_free(units);
  gc_cipher* ctr = NULL;
  CHECK(gc_cipher_new(&ctr, "aes-128-ctr", 1, key, 16, zero_tweak, 16, device, NULL) == GC_OK, "ctr on %s", device);
  CHECK(gc_cipher_update_units(ctr, plain, units_out, kUnit, kUnit, 0) == GC_ERROR_ARGUMENT, "units of CTR on %s",
        device);
  gc_cipher_free(ctr);
}

/* ---- the file format through the sealer / opener and the fd pipeline ---------------------- */

typedef struct {
  uint8_t* data;
  size_t len;
} buffer;

static void append(buffer* b, const uint8_t* data, size_t len) {
  if (!len) return;
  b->data = realloc(b->data, b->len + len);
  if (!b->data) abort();
  memcpy(b->data + b->len, data, len);
  b->len += len;
}

/* Seals `plain` with updates of `step` bytes; the whole file. */
static buffer seal(const uint8_t* plain, size_t len, uint32_t chunk_len, size_t step, const char* device) {
  buffer file = {NULL, 0};
  gc_file_sealer* sealer = NULL;
  if (gc_file_sealer_new(&sealer, key, sizeof key, chunk_len, device, NULL) != GC_OK) {
    CHECK(0, "sealer_new on %s", device);
    return file;
  }
  append(&file, gc_file_sealer_header(sealer), GC_FILE_HEADER_LEN);
  const uint8_t* out;
  size_t out_len;
  for (size_t at = 0; at < len; at += step) {
    const size_t n = len - at < step ? len - at : step;
    CHECK(gc_file_sealer_update(sealer, plain + at, n, &out, &out_len) == GC_OK, "sealer update");
    append(&file, out, out_len);
  }
  CHECK(gc_file_sealer_update(sealer, NULL, 0, &out, &out_len) == GC_OK, "sealer update(NULL, 0)");
  append(&file, out, out_len);
  CHECK(gc_file_sealer_finish(sealer, &out, &out_len) == GC_OK, "sealer finish");
  append(&file, out, out_len);
  gc_file_sealer_free(sealer);
  return file;
}

static buffer open_file(const buffer* file, size_t step, const char* device, gc_status* status) {
  buffer plain = {NULL, 0};
  gc_file_opener* opener = NULL;
  *status = gc_file_opener_new(&opener, key, sizeof key, device, NULL);
  if (*status != GC_OK) return plain;
  const uint8_t* out;
  size_t out_len;
  for (size_t at = 0; at < file->len && *status == GC_OK; at += step) {
    const size_t n = file->len - at < step ? file->len - at : step;
    *status = gc_file_opener_update(opener, file->data + at, n, &out, &out_len);
    if (*status == GC_OK) append(&plain, out, out_len);
  }
  if (*status == GC_OK) *status = gc_file_opener_finish(opener, &out, &out_len);
  if (*status == GC_OK) append(&plain, out, out_len);
  gc_file_opener_free(opener);
  return plain;
}

static void file_round_trips(const char* device) {
  enum { kChunk = 64 };
  static const size_t lengths[] = {0, 1, kChunk - 1, kChunk, 2 * kChunk, 5 * kChunk, 5 * kChunk + 17};
  static const size_t steps[] = {1, 7, kChunk, 3 * kChunk + 5, 1 << 20};
  uint8_t plain[5 * kChunk + 17];
  for (size_t i = 0; i < sizeof plain; ++i) plain[i] = (uint8_t)(i * 7 + 3);
  for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; ++l) {
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; ++s) {
      /* A plaintext of whole chunks (0, 64, 128, 320 bytes) ends in an empty final chunk. */
      buffer file = seal(plain, lengths[l], kChunk, steps[s], device);
      gc_status status;
      buffer back = open_file(&file, steps[(s + 1) % (sizeof steps / sizeof steps[0])], device, &status);
      CHECK(status == GC_OK && back.len == lengths[l] && (!back.len || memcmp(back.data, plain, back.len) == 0),
            "round trip of %zu bytes in steps of %zu on %s", lengths[l], steps[s], device);
      free(file.data);
      free(back.data);
    }
  }
}

static void fd_round_trip(const char* devices, size_t len) {
  FILE* in = tmpfile();
  FILE* sealed = tmpfile();
  FILE* back = tmpfile();
  if (!in || !sealed || !back) abort();
  for (size_t i = 0; i < len; ++i) fputc((int)(i % 251), in);
  fflush(in);
  rewind(in);
  CHECK(gc_file_seal_fd(fileno(in), fileno(sealed), key, sizeof key, 64, devices, NULL) == GC_OK,
        "seal_fd of %zu bytes on %s", len, devices);
  rewind(sealed);
  CHECK(gc_file_open_fd(fileno(sealed), fileno(back), key, sizeof key, devices, NULL) == GC_OK,
        "open_fd of %zu bytes on %s", len, devices);
  CHECK((size_t)ftell(back) == len, "open_fd gave %ld bytes of %zu", ftell(back), len);
  fclose(in);
  fclose(sealed);
  fclose(back);
}

/* ---- a handle fed its own previous output --------------------------------------------------- */

static void own_output_refused(void) {
  enum { kChunk = 64 };
  uint8_t plain[4 * kChunk];
  memset(plain, 'p', sizeof plain);
  gc_file_sealer* sealer = NULL;
  CHECK(gc_file_sealer_new(&sealer, key, sizeof key, kChunk, NULL, NULL) == GC_OK, "sealer_new");
  if (!sealer) return;
  buffer file = {NULL, 0};
  append(&file, gc_file_sealer_header(sealer), GC_FILE_HEADER_LEN);
  const uint8_t* out;
  size_t out_len;
  CHECK(gc_file_sealer_update(sealer, plain, sizeof plain, &out, &out_len) == GC_OK && out_len > 0, "sealer update");
  append(&file, out, out_len);
  const uint8_t* previous = out;
  const size_t previous_len = out_len;
  /* The previous output, and a piece of it: refused, nothing changed (so the file stays whole). */
  CHECK(gc_file_sealer_update(sealer, previous, previous_len, &out, &out_len) == GC_ERROR_ARGUMENT,
        "sealer fed its own previous output");
  CHECK(strstr(gc_last_error(), "previous output") != NULL, "the message names the previous output");
  CHECK(gc_file_sealer_update(sealer, previous + 10, 5, &out, &out_len) == GC_ERROR_ARGUMENT,
        "sealer fed a piece of its previous output");
  CHECK(gc_file_sealer_finish(sealer, &out, &out_len) == GC_OK, "sealer finish after the refusals");
  append(&file, out, out_len);
  gc_file_sealer_free(sealer);
  gc_status status;
  buffer back = open_file(&file, 1 << 20, "cpu", &status);
  CHECK(status == GC_OK && back.len == sizeof plain && memcmp(back.data, plain, sizeof plain) == 0,
        "the file sealed around the refusals opens to its plaintext");
  free(back.data);

  gc_file_opener* opener = NULL;
  CHECK(gc_file_opener_new(&opener, key, sizeof key, NULL, NULL) == GC_OK, "opener_new");
  if (opener) {
    /* Header and the first two chunks: plaintext out; then that plaintext fed back in. */
    const size_t first = GC_FILE_HEADER_LEN + 2 * (kChunk + 16) + 1;
    CHECK(gc_file_opener_update(opener, file.data, first, &out, &out_len) == GC_OK && out_len > 0, "opener update");
    CHECK(gc_file_opener_update(opener, out, out_len, &out, &out_len) == GC_ERROR_ARGUMENT,
          "opener fed its own previous output");
    CHECK(gc_file_opener_update(opener, file.data + first, file.len - first, &out, &out_len) == GC_OK,
          "opener goes on after the refusal");
    CHECK(gc_file_opener_finish(opener, &out, &out_len) == GC_OK, "opener finish after the refusal");
    gc_file_opener_free(opener);
  }
  free(file.data);
}

/* ---- devices refused when the handle is made ------------------------------------------------ */

static void devices_refused_at_new(void) {
  static const struct {
    const char* device;
    gc_status status;
    const char* message;
  } cases[] = {
      {"nonsense", GC_ERROR_ARGUMENT, "unknown device 'nonsense'"},
      {"cpu:1", GC_ERROR_ARGUMENT, "unknown device 'cpu:1'"},
      {"cuda:99", GC_ERROR_DEVICE, "device 'cuda:99' is not available: "},
      {"opencl:99", GC_ERROR_DEVICE, "device 'opencl:99' is not available: "},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const char* device = cases[i].device;
    gc_file_sealer* sealer = NULL;
    gc_file_opener* opener = NULL;
    CHECK(gc_file_sealer_new(&sealer, key, sizeof key, 0, device, NULL) == cases[i].status && !sealer,
          "sealer_new(%s)", device);
    CHECK(strstr(gc_last_error(), cases[i].message) != NULL, "sealer_new(%s): message", device);
    CHECK(gc_file_opener_new(&opener, key, sizeof key, device, NULL) == cases[i].status && !opener,
          "opener_new(%s)", device);
    CHECK(strstr(gc_last_error(), cases[i].message) != NULL, "opener_new(%s): message", device);
    char list[64];
    snprintf(list, sizeof list, "cpu,%s", device);
    FILE* in = tmpfile();
    FILE* out = tmpfile();
    if (!in || !out) abort();
    fputs("some plaintext", in);
    rewind(in);
    CHECK(gc_file_seal_fd(fileno(in), fileno(out), key, sizeof key, 0, list, NULL) == cases[i].status,
          "seal_fd(%s)", list);
    CHECK(strstr(gc_last_error(), cases[i].message) != NULL, "seal_fd(%s): message", list);
    CHECK(ftell(in) == 0 && ftell(out) == 0, "seal_fd(%s) read or wrote before refusing", list);
    CHECK(gc_file_open_fd(fileno(in), fileno(out), key, sizeof key, list, NULL) == cases[i].status,
          "open_fd(%s)", list);
    CHECK(strstr(gc_last_error(), cases[i].message) != NULL, "open_fd(%s): message", list);
    fclose(in);
    fclose(out);
  }
}

/* One section per defect class; `c_api_edges NAME` runs only the sections whose name contains
 * NAME (under a sanitizer the first finding ends the run, so each can be looked at alone). */
static int wanted(int argc, char** argv, const char* section) { return argc < 2 || strstr(section, argv[1]) != NULL; }

int main(int argc, char** argv) {
  for (size_t i = 0; i < sizeof key; ++i) key[i] = (uint8_t)(i + 1);
  if (wanted(argc, argv, "null_with_zero_length")) {
    static const char* const gcm_variants[] = {NULL, "aes_openssl", "aes_vaes_gcm", "aes_ttable", "aes_bitsliced"};
    for (size_t v = 0; v < sizeof gcm_variants / sizeof gcm_variants[0]; ++v) {
      aead_empty_messages("aes-128-gcm", "cpu", gcm_variants[v]);
      aead_empty_messages("aes-256-gcm", "cpu", gcm_variants[v]);
    }
    aead_empty_messages("camellia-128-gcm", "cpu", NULL);
    aead_empty_messages("camellia-128-gcm", "cpu", "camellia_ttable");
    aead_empty_messages("sc2000-128-gcm", "cpu", NULL);
    aead_empty_messages("aes-128-gcm", "opencl:0", NULL);
    cipher_empty_updates("cpu");
    uint8_t digest[32];
    CHECK(gc_hash("sha3-256", NULL, 0, digest, sizeof digest) == GC_OK, "gc_hash(NULL, 0)");
  }
  if (wanted(argc, argv, "empty_final_chunks")) {
    file_round_trips("cpu");
    for (size_t len = 0; len <= 4 * 64; len += 64) fd_round_trip("cpu", len);
    fd_round_trip("cpu", 200);
    fd_round_trip("auto", 200);  /* the library's device policy: every GPU and the CPU */
  }
  if (wanted(argc, argv, "xts_units")) {
    xts_units_match_single_units("cpu");
    xts_units_match_single_units("opencl:0");
  }
  if (wanted(argc, argv, "own_output")) own_output_refused();
  if (wanted(argc, argv, "devices")) devices_refused_at_new();
  if (failures) {
    fprintf(stderr, "c_api_edges: %d failures\n", failures);
    return 1;
  }
  printf("c_api_edges: ok\n");
  return 0;
}
