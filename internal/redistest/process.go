package redistest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is a child process the fixture started and must stop.
// Its methods are safe for concurrent use.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited and been reaped
	err  error         // Wait's result, readable after done is closed

	mu     sync.Mutex
	frozen bool
}

// StartProcess starts name with args. The child is killed when this process
// dies (Linux parent-death signal), so a killed test binary leaves nothing
// behind. attr may be nil; it is used for the child's credentials.
func StartProcess(name string, args []string, attr *syscall.SysProcAttr, dir string, logTo *os.File) (*Process, error) {
	cmd := exec.Command(name, args...)
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = attr
	cmd.Dir = dir
	if logTo != nil {
		cmd.Stdout = logTo
		cmd.Stderr = logTo
	}
	return start(cmd)
}

// start starts cmd, whose SysProcAttr is set, and reaps it when it exits.
func start(cmd *exec.Cmd) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redistest: start %s: %w", cmd.Path, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited returns a channel closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Signal sends sig to the process. It is a no-op after the process exited.
func (p *Process) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("redistest: signal %v to pid %d: %w", sig, p.Pid(), err)
	}
	return nil
}

// Freeze stops the process with SIGSTOP: it keeps its sockets open and
// answers nothing, as a process in a long GC pause or a suspended VM would.
func (p *Process) Freeze() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.frozen = true
	return nil
}

// Thaw resumes a frozen process with SIGCONT.
func (p *Process) Thaw() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.Signal(syscall.SIGCONT); err != nil {
		return err
	}
	p.frozen = false
	return nil
}

// Frozen reports whether Freeze was called without a Thaw since.
func (p *Process) Frozen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frozen
}

// Stop asks the process to exit with sig and waits up to grace for it,
// then kills it. A frozen process is thawed first so it can handle sig.
func (p *Process) Stop(sig syscall.Signal, grace time.Duration) error {
	if p.Frozen() {
		if err := p.Thaw(); err != nil {
			return err
		}
	}
	if err := p.Signal(sig); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	return p.Kill()
}

// Kill sends SIGKILL and waits for the process to be reaped.
func (p *Process) Kill() error {
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.done
	return nil
}
