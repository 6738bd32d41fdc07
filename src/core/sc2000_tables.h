/* sc2000_tables.h: SC2000's non-linear function MS(x) = M(S(x)) split into six per-field tables.
 * Data only; sc2000.h explains why the split pays and says why that is not constant-time.
 *
 * S substitutes the fields of x (from the most significant bit: 6,5,5,5,5,6 bits) through S6 or
 * S5, and M is linear over GF(2), so
 *   MS(x) = MS6_HI[x>>26] ^ MS5_B21[x>>21 & 31] ^ MS5_B16[x>>16 & 31]
 *         ^ MS5_B11[x>>11 & 31] ^ MS5_B6[x>>6 & 31] ^ MS6_LO[x & 63]
 * with MS5_Bn[v] = M(S5[v] << n), MS6_HI[v] = M(S6[v] << 26), MS6_LO[v] = M(S6[v]).
 * Generated from the S6, S5 and M tables of the FSE 2001 paper (as printed in the project's
 * sc2000.md, with the correct M[11] = 0x695059ac); test_sc2000_core recomputes them from those
 * tables and runs the NESSIE vectors.
 *
 * Each table is a macro list so every translation unit can instantiate it with the qualifiers it
 * needs. GC_SC2000_MS_DATA lists all six back to back (64+4*32+64 = 256 words = 1 KiB) in the
 * order sc2000_tables_at() expects, so a kernel fills one shared-memory array with one copy loop.
 */
#ifndef GPUCRYPT_CORE_SC2000_TABLES_H
#define GPUCRYPT_CORE_SC2000_TABLES_H

#include "platform.h"

#define GC_SC2000_MS6_HI_DATA \
  0x93c07630u, 0x814af69bu, 0x3bfb2dbcu, 0xa1350977u, 0x4301e415u, 0xfd27124fu, 0x090e52fbu, 0x8844a460u, \
  0xd456bf58u, 0x0d997f86u, 0x67e93684u, 0x4a0fb6eeu, 0xd9cfc0deu, 0xbe26f65au, 0x8cd3891du, 0x6ee7647fu, \
  0xe234ed62u, 0x3662523au, 0x128a80abu, 0x5c121b38u, 0x2de6806au, 0x6a704902u, 0x637e1bf9u, 0x7c6de4d4u, \
  0x9e5909b6u, 0x71f49b52u, 0xdd58eda3u, 0x78fac9a9u, 0x4796c968u, 0x7563b62fu, 0x9ace24cbu, 0xf42940b4u, \
  0xb3bf89dcu, 0xc24b128eu, 0x3f6c00c1u, 0xcfd26d08u, 0xc6dc3ff3u, 0x161dadd6u, 0x00000000u, 0xa83b5b8cu, \
  0x207fffecu, 0xcb454075u, 0x518b64beu, 0xb728a4a1u, 0xe6a3c01fu, 0x1b84d250u, 0x32f57f47u, 0xacac76f1u, \
  0xefad92e4u, 0xa5a2240au, 0x4e989b93u, 0xbab1db27u, 0x551c49c3u, 0x58853645u, 0xf9b03f32u, 0xf0be6dc9u, \
  0x1f13ff2du, 0x04972d7du, 0x85dddbe6u, 0x97575b4du, 0x24e8d291u, 0xeb3abf99u, 0xd0c19225u, 0x2971ad17u

#define GC_SC2000_MS5_B21_DATA \
  0xd9beca30u, 0x45336885u, 0xcb75b9cfu, 0x51c5ac43u, 0x12cb73ffu, 0x430edfbcu, 0x335c9c21u, 0x27aa58e7u, \
  0x063db739u, 0xeae25611u, 0xf82925eeu, 0x9c8da2b5u, 0xafd13e94u, 0x9ab0158cu, 0x57f81b7au, 0xa9ec89adu, \
  0xfe1492d7u, 0x887b6673u, 0xbb27fa52u, 0x62993062u, 0x7052439du, 0x766ff4a4u, 0xdf837d09u, 0x35612b18u, \
  0xbd1a4d6bu, 0x14f6c4c6u, 0xecdfe128u, 0x64a4875bu, 0x00000000u, 0xcd480ef6u, 0x8e46d14au, 0x2197efdeu

#define GC_SC2000_MS5_B16_DATA \
  0xa56276b1u, 0x23b5b4afu, 0x60ded5b0u, 0x5b2f3744u, 0xc5bca301u, 0x9e939445u, 0x4ae5ed03u, 0x327f6ee8u, \
  0xbd2620eau, 0xef879bb2u, 0x2a3b38b3u, 0x86d7c21eu, 0xcc322f1du, 0x3bf1e2f4u, 0xe60917aeu, 0x71140ff7u, \
  0x971d1859u, 0xfe4d41f5u, 0xb4a8acf6u, 0x11cada47u, 0xd4767946u, 0x695059acu, 0x1844565bu, 0xf7c3cde9u, \
  0x098e8c1cu, 0x789a83ebu, 0x52a1bb58u, 0xacecfaadu, 0x00000000u, 0xddf8f55au, 0x436b611fu, 0x8f594e02u

#define GC_SC2000_MS5_B11_DATA \
  0xd0af5883u, 0x917ced5fu, 0xb3853781u, 0xefe1cbe8u, 0x632a6f02u, 0x8ccba4eau, 0xa55fb967u, 0xdbc29fd0u, \
  0x1db749b5u, 0x75f0e1e4u, 0x16da8ee6u, 0x41d3b5dcu, 0xe48c0cbbu, 0x5c64fc69u, 0xf256825du, 0xf93b450eu, \
  0x0b6dc753u, 0x3f4e936bu, 0x9a112a0cu, 0x4abe728fu, 0x29941d8du, 0x34235438u, 0xcd181136u, 0xb8e8f0d2u, \
  0x87a663b9u, 0x7e9d26b7u, 0x6847a851u, 0x57093b3au, 0x00000000u, 0xae327e34u, 0x22f9dadeu, 0xc675d665u

#define GC_SC2000_MS5_B6_DATA \
  0x0b91a49bu, 0x54cf2438u, 0x79706449u, 0xbd44db3au, 0x72e1c0d2u, 0xcfa51be8u, 0x17234936u, 0xfea8b634u, \
  0x9b6a3fd0u, 0x1cb2edadu, 0x6e532d7fu, 0x5f5e80a3u, 0x487dc995u, 0xc434bf73u, 0x262ee4eau, 0xd317f645u, \
  0xf53912afu, 0xb6d57fa1u, 0xa1f63697u, 0xaa67920cu, 0xd88652deu, 0x43ec6d0eu, 0x90fb9b4bu, 0x8c4976e6u, \
  0x3a9c0947u, 0xe98bff02u, 0x87d8d27du, 0x310daddcu, 0x00000000u, 0xe21a5b99u, 0x2dbf4071u, 0x65c289e4u

#define GC_SC2000_MS6_LO_DATA \
  0x3a8868bdu, 0xdc279e90u, 0x1c4ebf35u, 0x4d7fe47au, 0xc6d95664u, 0x336cee28u, 0x6bb933f2u, 0xb79ead62u, \
  0xc98da730u, 0x5e65aa1bu, 0x625db567u, 0xad606596u, 0x97e80d2bu, 0xf5b5b84cu, 0x8242348bu, 0x09e48695u, \
  0x8ba6b21eu, 0x422b152eu, 0xe6aff62du, 0x7e130a52u, 0xcf3dd0f1u, 0x3c381f7cu, 0x57812c8eu, 0xef4b70b8u, \
  0x64edc2a6u, 0xb12edaa3u, 0xa23494c2u, 0xda97e951u, 0xf305cf8du, 0x84f2434au, 0x51315b4fu, 0x58d5dddau, \
  0xabd01257u, 0x1afec8f4u, 0x299226dcu, 0x449b62efu, 0x2f22511du, 0xd3736fc4u, 0x00000000u, 0x26c6d788u, \
  0x91587aeau, 0x7147fb06u, 0x2076a049u, 0x9e0c8bbeu, 0xbe7a2bf7u, 0x8d16c5dfu, 0x77f78cc7u, 0x131a4e61u, \
  0xd5c31805u, 0x78a37d93u, 0x98bcfc7fu, 0xc06921a5u, 0x15aa39a0u, 0x4bcf93bbu, 0x06b077c1u, 0x6d094433u, \
  0xb8ca5c36u, 0x35dc99e9u, 0xe9fb0779u, 0x0f54f154u, 0xa484e303u, 0xe01f81ecu, 0xfc513ed9u, 0xfae14918u

#define GC_SC2000_MS_WORDS 256
#define GC_SC2000_MS_DATA \
  GC_SC2000_MS6_HI_DATA, GC_SC2000_MS5_B21_DATA, GC_SC2000_MS5_B16_DATA, \
  GC_SC2000_MS5_B11_DATA, GC_SC2000_MS5_B6_DATA, GC_SC2000_MS6_LO_DATA

#if !defined(__OPENCL_VERSION__)
/* Host copy (CPU backend, tests, CUDA host code; device code instantiates its own copy from the
 * macro list): pass it to sc2000_tables_at(). */
static const uint32_t gc_sc2000_ms[GC_SC2000_MS_WORDS] = {GC_SC2000_MS_DATA};
#endif

#endif
