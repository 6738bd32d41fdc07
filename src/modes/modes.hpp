// modes.hpp: every block-cipher mode, for callers that want them all (backends, tests).
#pragma once

#include "block_cipher.hpp"
#include "cbc.hpp"
#include "cfb.hpp"
#include "ctr.hpp"
#include "ecb.hpp"
#include "gcm.hpp"
#include "ofb.hpp"
#include "padding.hpp"
#include "xts.hpp"
