// scrypt_memory.cpp: whether scrypt at a work factor fits in the memory this process can still get
// (format.hpp check_scrypt_memory): one rule for every caller that derives a key from a passphrase
// (the library's scrypt checks it first; Python's fileformat calls it before asking for a
// passphrase, so that a file demanding more memory than there is fails before a prompt in vain).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gpucrypt/format.hpp"

namespace gpucrypt::format {

namespace {
constexpr uint64_t kScryptR = 8;

std::optional<uint64_t> parse_number(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;  // "max"
  return std::stoull(std::string(text));
}

std::string read_text(const char* path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}
}  // namespace

uint64_t scrypt_memory_len(int log2n) { return 128 * kScryptR * (uint64_t(1) << log2n); }

std::string memory_text(uint64_t num_bytes) {
  static constexpr std::pair<const char*, int> kUnits[] = {{"PiB", 50}, {"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}};
  for (const auto& [unit, shift] : kUnits) {
    if (num_bytes >= (uint64_t(1) << shift)) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3g %s", double(num_bytes) / double(uint64_t(1) << shift), unit);
      return text;
    }
  }
  return std::to_string(num_bytes) + " bytes";
}

std::optional<int64_t> cgroup_memory_room(std::string_view max, std::string_view current, std::string_view stat) {
  const auto limit = parse_number(max), used = parse_number(current);
  if (!limit || !used) return std::nullopt;
  // memory.current counts the group's page cache, which the kernel evicts before it refuses the
  // group memory: a container that has read or written more than its limit in files sits at that
  // limit, most of it cache, and the limit less memory.current would refuse every scrypt. Its file
  // pages (active_file, inactive_file; tmpfs pages are not among them, they count as anon) are
  // room; the rest of what the group holds is not.
  uint64_t reclaimable = 0;
  std::istringstream lines{std::string(stat)};
  for (std::string key; lines >> key;) {
    uint64_t value = 0;
    if ((key == "active_file" || key == "inactive_file") && lines >> value) reclaimable += value;
    std::getline(lines, key);  // the rest of the line
  }
  return int64_t(*limit) - (int64_t(*used) - int64_t(std::min(reclaimable, *used)));
}

std::optional<int64_t> available_memory_len() {
  std::optional<int64_t> available;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    uint64_t kib = 0;
    if (key == "MemAvailable:" && meminfo >> kib) {
      available = int64_t(kib * 1024);
      break;
    }
    std::getline(meminfo, key);  // the rest of the line
  }
  if (!available) {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page_len = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_len > 0) available = int64_t(pages) * page_len;
  }
  const auto room = cgroup_memory_room(read_text("/sys/fs/cgroup/memory.max"), read_text("/sys/fs/cgroup/memory.current"),
                                       read_text("/sys/fs/cgroup/memory.stat"));
  if (room) available = available ? std::min(*available, *room) : *room;
  return available;
}

void check_scrypt_memory(int log2n, std::optional<int64_t> available) {
  const uint64_t needed = scrypt_memory_len(log2n);
  if (available && int64_t(needed) > *available)
    throw FormatError("scrypt work factor 2^" + std::to_string(log2n) + " needs " + memory_text(needed) +
                      " of memory, but only " + memory_text(uint64_t(std::max<int64_t>(*available, 0))) +
                      " is available");
}

void check_scrypt_memory(int log2n) { check_scrypt_memory(log2n, available_memory_len()); }

}  // namespace gpucrypt::format
