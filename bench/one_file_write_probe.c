// one_file_write_probe.c: T threads writing one file, pwrite(2) against memcpy into a MAP_SHARED
// mapping of the file preallocated with posix_fallocate (so that a page fault never finds the file
// system full: no SIGBUS). Is one file's buffered write path (Linux takes the inode's lock for each
// buffered write, tmpfs included) what bounds a parallel copy, the file pipeline's writers and
// several MPI ranks writing one output? Issue 30; docs/performance.md, 2026-11-29 (twelfth session).
//
//   cc -O2 -pthread bench/one_file_write_probe.c -o /tmp/one_file_write_probe
//   /tmp/one_file_write_probe /dev/shm/probe.bin 4096      # MiB; 1, 4 and 16 threads, 2 runs each
//
// Each run creates the file, preallocates it, writes every byte from a 64 MiB patterned (not zero)
// source in 4 MiB pieces (thread t: its contiguous 1/T of the file) and closes it; the time
// includes the preallocation (and for mmap the mapping and unmapping).
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static size_t total, piece = 4 << 20; static int fd, threads; static uint8_t *map, *src; static int use_mmap;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static void *worker(void *arg) {
  size_t id = (size_t)arg, per = total / threads, begin = id * per, end = begin + per;
  for (size_t at = begin; at < end; at += piece) {
    size_t len = end - at < piece ? end - at : piece;
    if (use_mmap) memcpy(map + at, src + (at % (64 << 20)), len);
    else if (pwrite(fd, src + (at % (64 << 20)), len, at) != (ssize_t)len) { perror("pwrite"); exit(1); }
  }
  return NULL;
}
int main(int argc, char **argv) {
  const char *path = argv[1]; total = (size_t)atoll(argv[2]) << 20;
  src = malloc((64 << 20) + piece); for (size_t i = 0; i < (64 << 20) + piece; ++i) src[i] = (uint8_t)(i * 2654435761u >> 13);
  int counts[] = {1, 4, 16};
  for (int m = 0; m < 2; ++m) for (int c = 0; c < 3; ++c) for (int rep = 0; rep < 2; ++rep) {
    use_mmap = m; threads = counts[c]; unlink(path);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    double t0 = now();
    if (posix_fallocate(fd, 0, total)) { perror("fallocate"); return 1; }
    if (use_mmap) { map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0); if (map == MAP_FAILED) { perror("mmap"); return 1; } }
    pthread_t th[64]; for (int i = 0; i < threads; ++i) pthread_create(&th[i], NULL, worker, (void *)(size_t)i);
    for (int i = 0; i < threads; ++i) pthread_join(th[i], NULL);
    if (use_mmap) munmap(map, total);
    close(fd); double t = now() - t0;
    printf("%s threads %2d: %.3f s %.2f GB/s (fallocate included)\n", use_mmap ? "mmap  " : "pwrite", threads, t, total / t / 1e9);
    fflush(stdout);
  }
  unlink(path); return 0;
}
