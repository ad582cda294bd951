package cpu

import "syscall"

// osYield gives the thread's core to another runnable thread, if any
// (sched_yield): a spinning worker then does not take a core from the
// caller it waits for when the machine has fewer free cores than threads.
func osYield() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
