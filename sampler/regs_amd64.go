package sampler

// entryRegsMask selects BP, SP and IP in sample_regs_user (perf_regs.h on
// x86_64: BP=6, SP=7, IP=8).
const entryRegsMask = 1<<6 | 1<<7 | 1<<8
