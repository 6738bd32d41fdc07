// c_api.cpp: include/gpucrypt/gpucrypt.h over the C++ API. Exceptions become status codes and a
// per-thread message; nothing throws across the C boundary.
// Constant-time: adds no branch or index on secrets (it forwards to the chosen variant).
#include "gpucrypt/gpucrypt.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "base/names.hpp"
#include "gpucrypt/aead.hpp"
#include "gpucrypt/format.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/hash.hpp"

struct gc_cipher {
  std::unique_ptr<gpucrypt::CipherStream> stream;
};
struct gc_aead {
  std::unique_ptr<gpucrypt::Aead> gcm;
};
struct gc_file_sealer {
  std::unique_ptr<gpucrypt::format::Sealer> sealer;
  std::vector<uint8_t> out;
};
struct gc_file_opener {
  std::unique_ptr<gpucrypt::format::Opener> opener;
  std::vector<uint8_t> out;
};

namespace {

thread_local std::string last_error;

// Runs `body`, mapping each exception type to its status (most specific first).
template <class Body>
gc_status guarded(Body&& body) {
  try {
    last_error.clear();
    body();
    return GC_OK;
  } catch (const gpucrypt::format::DecryptionError& e) {
    last_error = e.what();
    return GC_ERROR_AUTHENTICATION;
  } catch (const gpucrypt::format::FormatError& e) {
    last_error = e.what();
    return GC_ERROR_FORMAT;
  } catch (const gpucrypt::DeviceError& e) {
    last_error = e.what();
    return GC_ERROR_DEVICE;
  } catch (const std::invalid_argument& e) {
    last_error = e.what();
    return GC_ERROR_ARGUMENT;
  } catch (const std::system_error& e) {
    last_error = e.what();
    return GC_ERROR_IO;
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return GC_ERROR_MEMORY;
  } catch (const std::exception& e) {
    last_error = e.what();
    return GC_ERROR_INTERNAL;
  } catch (...) {
    last_error = "unknown error";
    return GC_ERROR_INTERNAL;
  }
}

std::string_view or_default(const char* s, std::string_view fallback = "") { return s && *s ? s : fallback; }

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

gpucrypt::ByteSpan span(const uint8_t* p, size_t n) { return {p, n}; }

// A file sealer's or opener's *out lives in the handle's buffer, which the next update clears
// (the opener wipes it) and may reallocate before it has read `in`: input from there is refused
// (GC_ERROR_ARGUMENT, the handle unchanged), not read after it was freed or zeroed.
void refuse_previous_output(const char* function, const uint8_t* in, size_t len, const std::vector<uint8_t>& out) {
  if (gpucrypt::ranges_overlap(in, len, out.data(), out.size()))
    throw std::invalid_argument(std::string(function) +
                                ": in overlaps this handle's previous output (*out is valid only until the "
                                "next call: copy it first)");
}

// The canonical name of a device that is there, checked when a handle is made or before a
// stream's first byte is read: an unknown name is GC_ERROR_ARGUMENT ("unknown device 'x':
// expected ..."), an absent device GC_ERROR_DEVICE with the reason ("device 'cuda:0' is not
// available: ..."), the CLI's messages, rather than a variant error at the first update.
std::string present_device(std::string_view name) {
  const gpucrypt::Device& device = gpucrypt::device(name);
  device.info();  // an index beyond the backend's devices throws here
  return device.name().canonical;
}

// A device list "cuda:0,cpu", or "auto" (NULL or empty: "cpu"), as pipeline options: the library's
// device policy (gpucrypt/device.hpp select_devices), each device checked to be there.
gpucrypt::format::PipelineOptions pipeline_options(const char* devices, const char* variant) {
  gpucrypt::format::PipelineOptions options;
  const std::string list(or_default(devices, "cpu"));
  const gpucrypt::DeviceSelection chosen =
      list == "auto" ? gpucrypt::select_devices("auto") : gpucrypt::select_devices("", list);
  require(!chosen.devices.empty(), "no device named");
  options.devices = chosen.devices;
  options.cpu_share = chosen.cpu_share;
  options.variant = std::string(or_default(variant));
  return options;
}

// `count` C strings as the library's list; GC_ERROR_ARGUMENT for a null one.
std::vector<std::string> string_list(const char* const* items, size_t count, const char* what) {
  require(items || !count, (std::string(what) + ": null list").c_str());
  std::vector<std::string> list;
  for (size_t i = 0; i < count; ++i) {
    require(items[i] != nullptr, (std::string(what) + ": null string in the list").c_str());
    list.emplace_back(items[i]);
  }
  return list;
}
}  // namespace

extern "C" {

const char* gc_last_error(void) { return last_error.c_str(); }

gc_status gc_cipher_new(gc_cipher** out, const char* name, int encrypt, const uint8_t* key, size_t key_len,
                        const uint8_t* iv, size_t iv_len, const char* device, const char* variant) {
  return guarded([&] {
    require(out && name && (key || !key_len) && (iv || !iv_len), "gc_cipher_new: null argument");
    auto handle = std::make_unique<gc_cipher>();
    handle->stream = gpucrypt::create_cipher_stream(
        gpucrypt::parse_cipher_name(name), encrypt ? gpucrypt::Direction::encrypt : gpucrypt::Direction::decrypt,
        span(key, key_len), span(iv, iv_len), or_default(variant), or_default(device, "cpu"));
    *out = handle.release();
  });
}

gc_status gc_cipher_update(gc_cipher* cipher, const uint8_t* in, uint8_t* out, size_t len) {
  return guarded([&] {
    require(cipher && ((in && out) || !len), "gc_cipher_update: null argument");
    cipher->stream->update(in, out, len);
  });
}

gc_status gc_cipher_update_units(gc_cipher* cipher, const uint8_t* in, uint8_t* out, size_t len, size_t unit_len,
                                 uint64_t first_unit) {
  return guarded([&] {
    require(cipher && ((in && out) || !len), "gc_cipher_update_units: null argument");
    cipher->stream->update_units(in, out, len, unit_len, first_unit);
  });
}

void gc_cipher_free(gc_cipher* cipher) { delete cipher; }

gc_status gc_aead_new(gc_aead** out, const char* name, const uint8_t* key, size_t key_len, const char* device,
                      const char* variant) {
  return guarded([&] {
    require(out && name && key, "gc_aead_new: null argument");
    auto handle = std::make_unique<gc_aead>();
    handle->gcm = gpucrypt::create_aead(name, span(key, key_len), or_default(variant), or_default(device, "cpu"));
    *out = handle.release();
  });
}

gc_status gc_aead_seal(gc_aead* aead, const uint8_t* nonce, size_t nonce_len, const uint8_t* aad, size_t aad_len,
                       const uint8_t* in, size_t len, size_t tag_len, uint8_t* out) {
  return guarded([&] {
    require(aead && nonce && out && (in || !len) && (aad || !aad_len), "gc_aead_seal: null argument");
    require(!gpucrypt::partially_overlapping(in, out, len), "gc_aead_seal: out partially overlaps in");
    aead->gcm->seal(span(nonce, nonce_len), span(aad, aad_len), span(in, len), tag_len, out);
  });
}

gc_status gc_aead_open(gc_aead* aead, const uint8_t* nonce, size_t nonce_len, const uint8_t* aad, size_t aad_len,
                       const uint8_t* in, size_t len, size_t tag_len, uint8_t* out) {
  bool ok = false;
  const gc_status status = guarded([&] {
    require(aead && nonce && in && (out || len <= tag_len) && (aad || !aad_len), "gc_aead_open: null argument");
    require(!gpucrypt::partially_overlapping(in, out, len > tag_len ? len - tag_len : 0), "gc_aead_open: out partially overlaps in");
    ok = aead->gcm->open(span(nonce, nonce_len), span(aad, aad_len), span(in, len), tag_len, out);
  });
  if (status != GC_OK) return status;
  if (!ok) {
    last_error = "authentication failed: wrong key, nonce, AAD or tag, or modified data";
    return GC_ERROR_AUTHENTICATION;
  }
  return GC_OK;
}

void gc_aead_free(gc_aead* aead) { delete aead; }

gc_status gc_hash(const char* name, const uint8_t* data, size_t len, uint8_t* out, size_t out_len) {
  return guarded([&] {
    require(name && out && (data || !len), "gc_hash: null argument");
    gpucrypt::hash::hash_once(name, "", data, len, out, out_len);
  });
}

gc_status gc_file_seal_fd(int in_fd, int out_fd, const uint8_t* key, size_t key_len, uint32_t chunk_len,
                          const char* devices, const char* variant) {
  return guarded([&] {
    require(key != nullptr, "gc_file_seal_fd: null key");
    gpucrypt::format::seal_fd(in_fd, out_fd, span(key, key_len),
                              chunk_len ? chunk_len : gpucrypt::format::kDefaultChunkLen,
                              pipeline_options(devices, variant));
  });
}

gc_status gc_file_open_fd(int in_fd, int out_fd, const uint8_t* key, size_t key_len, const char* devices,
                          const char* variant) {
  return guarded([&] {
    require(key != nullptr, "gc_file_open_fd: null key");
    gpucrypt::format::open_fd(in_fd, out_fd, span(key, key_len), pipeline_options(devices, variant));
  });
}

gc_status gc_file_seal_fd_recipients(int in_fd, int out_fd, const char* const* recipients, size_t count,
                                     uint32_t chunk_len, const char* devices, const char* variant) {
  return guarded([&] {
    gpucrypt::format::seal_fd(in_fd, out_fd, string_list(recipients, count, "gc_file_seal_fd_recipients"),
                              chunk_len ? chunk_len : gpucrypt::format::kDefaultChunkLen,
                              pipeline_options(devices, variant));
  });
}

gc_status gc_file_open_fd_identities(int in_fd, int out_fd, const char* const* identities, size_t count,
                                     const char* devices, const char* variant) {
  return guarded([&] {
    gpucrypt::format::open_fd(in_fd, out_fd, string_list(identities, count, "gc_file_open_fd_identities"),
                              pipeline_options(devices, variant));
  });
}

gc_status gc_file_seal_path(const char* in_path, const char* out_path, const uint8_t* key, size_t key_len,
                            uint32_t chunk_len, const char* devices, const char* variant, int overwrite) {
  return guarded([&] {
    require(in_path && out_path && key, "gc_file_seal_path: null argument");
    gpucrypt::format::OutputOptions output;
    output.overwrite = overwrite != 0;
    gpucrypt::format::seal_path(in_path, out_path, span(key, key_len),
                                chunk_len ? chunk_len : gpucrypt::format::kDefaultChunkLen,
                                pipeline_options(devices, variant), output);
  });
}

gc_status gc_file_open_path(const char* in_path, const char* out_path, const uint8_t* key, size_t key_len,
                            const char* devices, const char* variant, int overwrite) {
  return guarded([&] {
    require(in_path && out_path && key, "gc_file_open_path: null argument");
    gpucrypt::format::OutputOptions output;
    output.overwrite = overwrite != 0;
    gpucrypt::format::open_path(in_path, out_path, span(key, key_len), pipeline_options(devices, variant), output);
  });
}

gc_status gc_file_sealer_new(gc_file_sealer** out, const uint8_t* key, size_t key_len, uint32_t chunk_len,
                             const char* device, const char* variant) {
  return guarded([&] {
    require(out && key, "gc_file_sealer_new: null argument");
    auto handle = std::make_unique<gc_file_sealer>();
    handle->sealer = std::make_unique<gpucrypt::format::Sealer>(
        span(key, key_len), chunk_len ? chunk_len : gpucrypt::format::kDefaultChunkLen,
        present_device(or_default(device, "cpu")),
        or_default(variant));
    *out = handle.release();
  });
}

const uint8_t* gc_file_sealer_header(const gc_file_sealer* sealer) {
  return sealer ? sealer->sealer->header().data() : nullptr;
}

size_t gc_file_sealer_header_len(const gc_file_sealer* sealer) {
  return sealer ? sealer->sealer->header().size() : 0;
}

gc_status gc_file_sealer_new_recipients(gc_file_sealer** out, const char* const* recipients, size_t count,
                                        uint32_t chunk_len, const char* device, const char* variant) {
  return guarded([&] {
    require(out != nullptr, "gc_file_sealer_new_recipients: null argument");
    auto handle = std::make_unique<gc_file_sealer>();
    handle->sealer = std::make_unique<gpucrypt::format::Sealer>(
        string_list(recipients, count, "gc_file_sealer_new_recipients"),
        chunk_len ? chunk_len : gpucrypt::format::kDefaultChunkLen, present_device(or_default(device, "cpu")),
        or_default(variant));
    *out = handle.release();
  });
}

gc_status gc_file_opener_new_identities(gc_file_opener** out, const char* const* identities, size_t count,
                                        const char* device, const char* variant) {
  return guarded([&] {
    require(out != nullptr, "gc_file_opener_new_identities: null argument");
    auto handle = std::make_unique<gc_file_opener>();
    handle->opener = std::make_unique<gpucrypt::format::Opener>(
        string_list(identities, count, "gc_file_opener_new_identities"), present_device(or_default(device, "cpu")),
        or_default(variant));
    *out = handle.release();
  });
}

gc_status gc_file_sealer_update(gc_file_sealer* sealer, const uint8_t* in, size_t len, const uint8_t** out,
                                size_t* out_len) {
  return guarded([&] {
    require(sealer && out && out_len && (in || !len), "gc_file_sealer_update: null argument");
    refuse_previous_output("gc_file_sealer_update", in, len, sealer->out);
    sealer->out.clear();
    sealer->sealer->update(span(in, len), sealer->out);
    *out = sealer->out.data();
    *out_len = sealer->out.size();
  });
}

gc_status gc_file_sealer_finish(gc_file_sealer* sealer, const uint8_t** out, size_t* out_len) {
  return guarded([&] {
    require(sealer && out && out_len, "gc_file_sealer_finish: null argument");
    sealer->out.clear();
    sealer->sealer->finish(sealer->out);
    *out = sealer->out.data();
    *out_len = sealer->out.size();
  });
}

void gc_file_sealer_free(gc_file_sealer* sealer) {
  if (!sealer) return;
  gpucrypt::secure_zero(sealer->out.data(), sealer->out.size());
  delete sealer;
}

gc_status gc_file_opener_new(gc_file_opener** out, const uint8_t* key, size_t key_len, const char* device,
                             const char* variant) {
  return guarded([&] {
    require(out && key, "gc_file_opener_new: null argument");
    auto handle = std::make_unique<gc_file_opener>();
    handle->opener = std::make_unique<gpucrypt::format::Opener>(span(key, key_len), present_device(or_default(device, "cpu")),
                                                                or_default(variant));
    *out = handle.release();
  });
}

gc_status gc_file_opener_update(gc_file_opener* opener, const uint8_t* in, size_t len, const uint8_t** out,
                                size_t* out_len) {
  return guarded([&] {
    require(opener && out && out_len && (in || !len), "gc_file_opener_update: null argument");
    refuse_previous_output("gc_file_opener_update", in, len, opener->out);
    gpucrypt::secure_zero(opener->out.data(), opener->out.size());
    opener->out.clear();
    *out = nullptr;
    *out_len = 0;
    opener->opener->update(span(in, len), opener->out);
    *out = opener->out.data();
    *out_len = opener->out.size();
  });
}

gc_status gc_file_opener_finish(gc_file_opener* opener, const uint8_t** out, size_t* out_len) {
  return guarded([&] {
    require(opener && out && out_len, "gc_file_opener_finish: null argument");
    gpucrypt::secure_zero(opener->out.data(), opener->out.size());
    opener->out.clear();
    *out = nullptr;
    *out_len = 0;
    opener->opener->finish(opener->out);
    *out = opener->out.data();
    *out_len = opener->out.size();
  });
}

void gc_file_opener_free(gc_file_opener* opener) {
  if (!opener) return;
  gpucrypt::secure_zero(opener->out.data(), opener->out.size());
  delete opener;
}

}  // extern "C"
