"""The seed papers' setups and the figures they report, as data, so the report can put them
beside this machine's numbers. Figures are transcribed from the papers' text and tables; those
marked "derived" are computed from the text, not printed in it.
"""

PAPERS = {
    "nishikawa": {
        "citation": "N. Nishikawa, K. Iwai, H. Tanaka and T. Kurokawa, \"Throughput and Power "
                    "Efficiency Evaluation of Block Ciphers on Kepler and GCN GPUs Using "
                    "Micro-Benchmark Analysis\", IEICE Transactions on Information and Systems (2014).",
    },
    "bobrov": {
        "citation": "M. Bobrov, R. Melton, S. Radziszowski and M. Lukowiak, \"Effects of GPU and "
                    "CPU Loads on Performance of CUDA Applications\", Rochester Institute of Technology.",
    },
    "claes": {
        "citation": "O. Gervasi, D. Russo and F. Vella, \"The AES implantation based on OpenCL for "
                    "multi/many core architecture\" (clAES), University of Perugia / INFN.",
    },
    "harrison": {
        "citation": "O. Harrison and J. Waldron, a general-purpose GPU symmetric-crypto service with a "
                    "generic request format (message descriptors, per-message keys and IVs), on a G80.",
    },
    "lidi": {
        "citation": "Instituto de Investigacion en Informatica LIDI, Universidad Nacional de La Plata: "
                    "AES on a GPU and on a GPU cluster (MPI) for data larger than GPU memory.",
    },
    "beyond": {
        "citation": "None: questions the seed papers did not ask of today's hardware.",
    },
}

# Per experiment: the paper's setup in one paragraph and its figures (tables of cells).
SETUPS = {
    "nishikawa-throughput": (
        "AES-128 (T-box), Camellia-128 and SC2000-128 in ECB, OpenCL; round keys and tables copied "
        "to local memory, one 128-bit block per work-item held in registers. Each kernel ran 100 "
        "times, the first 10 dropped, the average reported; transfers ignored (T_enc). Launch shapes "
        "(work-groups, work-items) tuned per GPU: GTX 680 (64,1024), GTX 650 (16,1024), GTX 580 "
        "(128,512), HD 7970 (256,256), HD 7750 (64,256), HD 6770 (80,256)."),
    "nishikawa-power": (
        "Whole-machine power from every supply line (oscilloscope, 25,000 samples/s for 10 s after "
        "more than 10 s of steady state), idle (P_idle) and encrypting (P_enc); P_diff = P_enc - "
        "P_idle; P_eff = T_enc / P_diff, in Gbps/W."),
    "nishikawa-microbench": (
        "A kernel running a dependent chain a ^= b; b ^= a repeated 256 times in an unrolled loop "
        "(other instructions: change the operator), work-groups = 6 x compute units; cycles from "
        "(kernel time - empty kernel time) x clock; checked against the disassembly (the "
        "instruction count in the loop equals the iterations). Result in ops per clock per compute "
        "unit; also XOR throughput against the number of active work-item batches (Fig. 9)."),
    "bobrov-offload": (
        "AES-128/192/256 CTR and Keccak-224/256/384/512 (24 rounds) on a GTX 285 with a dual-core "
        "CPU; each dataset size timed 1000 times and averaged. t_Total (with transfers), t_GPU "
        "(kernel), t_CPU = t_Total - t_GPU, t_NoGPU (CPU-only implementation), t_Saved = "
        "(t_NoGPU - t_CPU) / t_NoGPU."),
    "bobrov-load": (
        "The same applications under a CPU load of 20/40/60% (a busy loop with sleeps) and a GPU "
        "load of 25/50/75% (another program using the GPU); loads sampled every second and "
        "averaged over the run; the increase of t_Total and t_GPU per dataset size."),
    "claes-crossover": (
        "AES-192 on an ATI FireStream 9270 (GPU), an Intel E8500 dual-core CPU through OpenCL, the "
        "same CPU running a serial C implementation, and a GeForce 8600 GT; kernel times from "
        "OpenCL profiling, with and without the copies to and from device memory; file sizes from "
        "128 B up; the ratio curves serial/GPU and serial/OpenCL-CPU (Fig. 6)."),
    "harrison-batch": (
        "A G80 GPU; a generic request format (message descriptors, per-message keys and IVs, a "
        "thread-to-message mapping) against a hard-coded AES-CTR kernel; serial-mode (CBC) "
        "messages one thread each; a mixed payload of 960 parallel-mode messages of 512 blocks, "
        "992 of 32 blocks and 1024 serial-mode messages in 8 sizes from 16 to 2048 blocks, in 7 "
        "orderings (Fig. 7)."),
    "lidi-fragments": (
        "A GeForce 560 Ti (1 GB) and a Core i5-2300; AES over 256 MB to 1 GB of data cut into "
        "128 MB or 256 MB fragments, each copied in, encrypted and copied out in turn; the "
        "cluster: the same GPUs over 1 Gbit Ethernet, rank 0 sending each node its share (MPI). "
        "Times in seconds."),
    "beyond-papers": (
        "Not in the papers: constant-time (bitsliced) against table variants, the cost of GCM and "
        "XTS over CTR, the GPU against the CPU of the same host for every algorithm, and scaling "
        "over several GPUs."),
}

FIGURES = {
    "nishikawa-throughput": [{
        "title": "T_enc, Gbps (ECB, kernel only)",
        "columns": ["device", "AES-128", "Camellia-128", "SC2000-128"],
        "rows": [
            ["Radeon HD 7970 (GCN)", 205.0, "~219 (derived)", "~339 (derived)"],
            ["GeForce GTX 680 (Kepler)", 63.9, "figure only", "figure only"],
            ["GeForce GTX 580 (Fermi)", 75.8, "", ""],
            ["Radeon HD 6770 (VLIW)", 38.5, "", ""],
            ["Tesla C2050 (their earlier CUDA work)", 48.6, 50.7, 73.4],
            ["Phenom II X6, 6 threads (OpenMP)", 8.3, 6.8, 7.8],
        ]}],
    "nishikawa-power": [{
        "title": "P_diff, W (whole machine)",
        "columns": ["cipher", "GTX 680", "GTX 650", "GTX 580", "HD 7970", "HD 7750", "HD 6770"],
        "rows": [
            ["AES", 147.7, 59.4, 194.9, 157.5, 30.1, 57.0],
            ["Camellia", 153.1, 59.2, 196.9, 173.5, 31.1, 54.8],
            ["SC2000", 150.3, 58.9, 185.3, 179.0, 31.3, 53.9],
        ]}, {
        "title": "P_eff, Gbps/W",
        "columns": ["device", "AES-128", "Camellia-128", "SC2000-128"],
        "rows": [
            ["GTX 680", 0.43, "", ""], ["GTX 650", 0.27, "", ""], ["GTX 580", 0.39, "", ""],
            ["HD 7970", 1.3, "", ""], ["HD 6770", 0.68, "", ""],
            ["Phenom II X6 (CPU)", 0.07, 0.06, 0.07],
        ]}],
    "nishikawa-microbench": [{
        "title": "ops / clock / compute unit (their Table 7)",
        "columns": ["device", "ADD/SUB", "MUL", "MAD", "XOR/AND/OR", "SHL/SHR", "float ADD",
                    "float MUL", "double ADD", "double MUL"],
        "rows": [
            ["GTX 680", 63.7, 32.3, 32.3, 63.7, 31.3, 64.6, 64.6, 8.0, 8.0],
            ["GTX 650", 63.8, 32.0, 32.0, 63.8, 31.0, 63.8, 63.8, 8.0, 8.0],
            ["GTX 580", 31.1, 15.9, 15.9, 31.1, 15.6, 31.8, 31.8, 4.0, 4.0],
            ["HD 7970", 63.3, 63.3, 31.6, 63.3, 63.3, 63.1, 63.1, 31.6, 15.8],
            ["HD 7750", 64.0, 64.0, 31.9, 64.0, 64.0, 61.2, 62.1, 8.0, 4.0],
        ]}, {
        "title": "instruction mix of a cipher",
        "columns": ["cipher", "table lookups", "round-key words", "arithmetic/logic"],
        "rows": [["SC2000-128, per block", 72, 56, 506]]}],
    "bobrov-offload": [{
        "title": "offloading (GTX 285, dual-core CPU)",
        "columns": ["finding", "figure"],
        "rows": [
            ["offloading pays off", "from 256 KB datasets"],
            ["CPU time saved at 256 KB and above", "at least 20%"],
            ["best CPU time saved", "AES-256: 60%"],
        ]}],
    "bobrov-load": [{
        "title": "load interference",
        "columns": ["finding", "figure"],
        "rows": [
            ["CPU load, AES-256, datasets > 1 MB, total time", "+4% (20% load), +12% (40%), +22% (60%)"],
            ["CPU load, Keccak-512, datasets > 32 KB", "< 1.5%"],
            ["GPU load, AES-256, total time, large datasets", "+25% (25% load), +27% (50%), +36% (75%)"],
            ["GPU load, AES-256, small datasets", "up to +2000%"],
            ["GPU load, Keccak-512", "about +2% for large datasets; GPU time +6-11% below 8 KB, 0-1% above 32 KB"],
        ]}],
    "claes-crossover": [{
        "title": "AES-192, FireStream 9270 and E8500",
        "columns": ["finding", "figure"],
        "rows": [
            ["128 B", "the GPU is slower than the CPU, serial or OpenCL"],
            ["256 B", "GPU faster than serial CPU, slower than OpenCL CPU"],
            ["from about 1 KB", "the GPU is fastest; the crossover moves up a little with transfers"],
            ["serial / GPU", "gain grows until 32 KB, then about constant"],
            ["serial / OpenCL CPU", "1.85 to 4"],
            ["overall, without copies", "OpenCL CPU 4x serial; GPU 11x serial"],
        ]}],
    "harrison-batch": [{
        "title": "generic format and serial modes (G80)",
        "columns": ["finding", "figure"],
        "rows": [
            ["best CTR throughput, generic format, rekey per message", "5,810 Mbps"],
            ["generic-format overhead vs hard-coded, 16384-block messages", "16%"],
            ["... 512-block messages", "22%"],
            ["... 16-block messages", "45%"],
            ["serial modes (CBC), one thread per message", "need many messages; large ones hit a memory-access bottleneck"],
            ["hard-coded AES-CTR vs CPU, with / without transfers", "4x / 10x"],
            ["mixed payloads (Fig. 7)", "group serial messages by SIMD width, spread groups over multiprocessors, sort by size"],
        ]}],
    "lidi-fragments": [{
        "title": "one GPU (560 Ti), seconds: H2D / encrypt / D2H / total",
        "columns": ["fragments", "256 MB", "512 MB", "1 GB"],
        "rows": [
            ["128 MB", "0.048 / 0.81 / 0.074 / 0.932", "0.095 / 1.63 / 0.11 / 1.835", "0.18 / 3.26 / 0.21 / 3.65"],
            ["256 MB", "0.048 / 0.81 / 0.1 / 0.958", "0.093 / 1.63 / 0.14 / 1.863", "0.18 / 3.26 / 0.23 / 3.67"],
        ]}, {
        "title": "cluster over 1 Gbit Ethernet, seconds",
        "columns": ["GPUs", "256 MB", "512 MB", "1 GB"],
        "rows": [
            ["4: send / H2D / encrypt / D2H / receive", "1.76 / 0.012 / 0.2 / 0.025 / 1.76",
             "3.53 / 0.024 / 0.4 / 0.051 / 3.53", "7.07 / 0.048 / 0.81 / 0.1 / 7.06"],
            ["4: total with / without communication", "3.757 / 0.237", "7.535 / 0.475", "15.088 / 0.958"],
            ["8: send / H2D / encrypt / D2H / receive", "2.04 / 0.007 / 0.1 / 0.012 / 2.03",
             "4.06 / 0.012 / 0.2 / 0.026 / 4.14", "8.1 / 0.025 / 0.4 / 0.051 / 8.28"],
            ["8: total with / without communication", "4.189 / 0.119", "8.438 / 0.238", "16.856 / 0.476"],
        ]}],
    "beyond-papers": [{
        "title": "for orientation (this project's earlier measurements, H200)",
        "columns": ["figure", "value"],
        "rows": [
            ["AES-128-CTR on an H200, device-resident", "about 4.9 Tbps"],
            ["above idle while doing it", "about 614 W, i.e. about 8 Gbps/W"],
        ]}],
}

# Paper throughput figures for plotting beside ours: (label, Gbps) for AES-128 ECB T_enc.
AES128_TENC_GBPS = [
    ("HD 7970", 205.0), ("GTX 580", 75.8), ("GTX 680", 63.9), ("C2050", 48.6),
    ("HD 6770", 38.5), ("Phenom II X6", 8.3),
]

# Table 7 columns that map to our micro-benchmark operations (op name -> column index in FIGURES).
MICROBENCH_COLUMNS = {"add": 1, "sub": 1, "mul": 2, "mad": 3, "xor": 4, "and": 4, "or": 4,
                      "shl": 5, "shr": 5, "fadd": 6, "fmul": 7, "dadd": 8, "dmul": 9,
                      "lop3": 4}   # XOR/AND/OR compile to LOP3 on today's NVIDIA GPUs

# Harrison's Fig. 7 message mix: (mode, count, blocks per message) before scaling.
HARRISON_MIX = ([("ctr", 960, 512), ("ctr", 992, 32)]
                + [("cbc", 128, blocks) for blocks in (16, 32, 64, 128, 256, 512, 1024, 2048)])
