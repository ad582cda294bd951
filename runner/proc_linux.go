package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// setPdeathsig has the kernel kill the child when the thread that started
// it exits.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// becomeSubreaper makes this process the child subreaper of what it
// starts: a process orphaned below it (a trainer's child whose parent
// exited) becomes its child, not init's, so that it can be ended and
// reaped with the run.
func becomeSubreaper() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", e)
	}
	return nil
}

// ownChildren lists this process's living children, from
// /proc/self/task/*/children (with becomeSubreaper, the orphans it
// inherited).
func ownChildren() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				out = append(out, pid)
			}
		}
	}
	return out
}
