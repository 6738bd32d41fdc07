// scrypt_memory.cpp: whether scrypt at a work factor fits in the memory this process can still get
// (format.hpp check_scrypt_memory): one rule for every caller that derives a key from a passphrase
// (the library's scrypt checks it first; Python's fileformat calls it before asking for a
// passphrase, so that a file demanding more memory than there is fails before a prompt in vain).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <new>
#include <string>

#include "gpucrypt/format.hpp"

namespace gpucrypt::format {

namespace {
constexpr uint64_t kScryptR = 8;

std::optional<uint64_t> parse_number(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;  // "max"
  return value;
}

// The number after `key` at the start of a line of `text` ("MemAvailable:" in /proc/meminfo,
// "active_file" in a cgroup's memory.stat), or nothing. Parsed with from_chars (locale-free), not
// iostreams: an ifstream >> parse of /proc/meminfo read 0 bytes inside pytest on the H200 host
// (and the right figure outside it), so every scrypt was refused there; the cause inside the
// streams was not found (docs/performance.md, eleventh session).
std::optional<uint64_t> field(std::string_view text, std::string_view key) {
  for (size_t at = 0; at < text.size();) {
    size_t line_end = text.find('\n', at);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(at, line_end - at);
    at = line_end + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ') continue;
    line.remove_prefix(key.size());
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    uint64_t value = 0;
    if (std::from_chars(line.data(), line.data() + line.size(), value).ec == std::errc()) return value;
    return std::nullopt;
  }
  return std::nullopt;
}

// A whole small file (procfs, cgroupfs: their size is not known before reading) by read(2); ""
// when it cannot be read.
std::string read_text(const char* path) {
  std::string text;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      text.clear();
      break;
    }
    text.append(buffer, size_t(got));
  }
  ::close(fd);
  return text;
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
  const uint64_t reclaimable = field(stat, "active_file").value_or(0) + field(stat, "inactive_file").value_or(0);
  return int64_t(*limit) - (int64_t(*used) - int64_t(std::min(reclaimable, *used)));
}

std::optional<int64_t> available_memory_len() {
  std::optional<int64_t> available;
  if (const auto kib = field(read_text("/proc/meminfo"), "MemAvailable:")) available = int64_t(*kib * 1024);
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

DigestTooLong::DigestTooLong(uint64_t out_len, uint64_t available)
    : message_("a digest of " + memory_text(out_len) + " (" + std::to_string(out_len) +
               " bytes) does not fit in the memory available (" + memory_text(available) + ")") {}

void check_digest_memory(size_t out_len) {
  // Reading /proc/meminfo and the cgroup files costs ~7 us, ten times a 64-byte SHA3-256 through
  // Python (every digest the bindings allocate comes here); a digest this short cannot be what
  // exhausts memory, so only longer ones are checked.
  constexpr size_t kUncheckedDigestLen = size_t{64} << 20;
  if (out_len < kUncheckedDigestLen) return;
  const std::optional<int64_t> available = available_memory_len();
  if (!available) return;
  const uint64_t room = static_cast<uint64_t>(std::max<int64_t>(*available, 0));
  if (room < out_len) throw DigestTooLong(out_len, room);
}

}  // namespace gpucrypt::format
