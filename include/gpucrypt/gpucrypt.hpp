// gpucrypt.hpp: the whole public C++ API, one include. Each part has its own header:
//   cipher.hpp  ciphers and GCM; cipher, variant and device names
//   device.hpp  the Device interface and gpucrypt::device(name)
//   hash.hpp    Keccak-family hashes, hash_many, tree hashes cut at leaf boundaries
//   batch.hpp   the batch engine: many messages with their own keys in one plan
//   format.hpp  the file format: layout, chunk ranges, Sealer and Opener
//   scheduler.hpp  ordered, bounded jobs on per-device worker threads (the stream engine's core)
//   speed.hpp   `gpucrypt speed`'s native timing loop
//   parallel.hpp   the CPU backend's worker pool, for a program's own host work
// The C API over them is gpucrypt.h.
#pragma once

#include "gpucrypt/batch.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/format.hpp"
#include "gpucrypt/hash.hpp"
#include "gpucrypt/parallel.hpp"
#include "gpucrypt/scheduler.hpp"
#include "gpucrypt/speed.hpp"
