package runner

import "syscall"

// setPdeathsig has the kernel kill the child when the thread that started
// it exits.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
