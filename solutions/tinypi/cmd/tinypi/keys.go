//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The agent's keys are kept out of the reach of the commands its bash tool runs. A command runs as
// the same user as tinypi, so it can read tinypi's environment in /proc/$PPID/environ: that file
// shows the environment the program was started with, whatever the program did with it later.
// So tinypi, when it starts with a key in its environment, reads the keys, writes them into a
// pipe, and executes itself again with an environment without them; the new image reads the keys
// from the pipe, which it inherited, and closes it. On Linux it also marks itself not dumpable,
// so that a command of the same user cannot read its memory (/proc/$PPID/mem, ptrace) either.
// What a command can still reach is everything else the user can: files, other processes.

// keyVars are the variables holding the agent's secrets.
var keyVars = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TINYPI_API_KEY", "TINYPI_PROXY_TOKEN"}

// keysFDVar names the inherited pipe the keys come through, in the re-executed image.
const keysFDVar = "TINYPI_KEYS_FD"

// maxKeysBytes bounds the keys passed through the pipe: the pipe is written before the new image
// runs to read it, so all of it must fit in the pipe's buffer (64 KiB on Linux).
const maxKeysBytes = 32 << 10

// hideKeys executes the program again without the keys in its environment when it has any; it
// only returns when it has none (or on an error, before anything was changed). It is called first
// thing in main, before any file or thread of the program's own exists.
func hideKeys() error {
	if os.Getenv(keysFDVar) != "" {
		return nil // the re-executed image: takeKeys reads them
	}
	keys := map[string]string{}
	for _, name := range keyVars {
		if v := os.Getenv(name); v != "" {
			keys[name] = v
		}
	}
	if len(keys) == 0 {
		return nil
	}
	data, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	if len(data) > maxKeysBytes {
		return fmt.Errorf("the keys in %s are longer than %d bytes together", strings.Join(keyVars, ", "), maxKeysBytes)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the program to run it again without the keys in its environment: %w", err)
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], 0); err != nil { // no close-on-exec: the new image inherits it
		return fmt.Errorf("a pipe for the keys: %w", err)
	}
	syscall.CloseOnExec(p[1])
	if _, err := syscall.Write(p[1], data); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return fmt.Errorf("writing the keys into their pipe: %w", err)
	}
	syscall.Close(p[1])
	var environ []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !isKeyVar(name) && name != keysFDVar {
			environ = append(environ, kv)
		}
	}
	environ = append(environ, keysFDVar+"="+strconv.Itoa(p[0]))
	err = syscall.Exec(exe, os.Args, environ)
	syscall.Close(p[0])
	return fmt.Errorf("running %s again without the keys in its environment: %w", exe, err)
}

func isKeyVar(name string) bool {
	for _, k := range keyVars {
		if name == k {
			return true
		}
	}
	return false
}

// takeKeys reads the keys hideKeys passed, closes their pipe, and returns them (none when the
// program was started without keys). It also makes the process not dumpable (see above).
func takeKeys() (map[string]string, error) {
	keys := map[string]string{}
	fdText, ok := os.LookupEnv(keysFDVar)
	os.Unsetenv(keysFDVar)
	if err := notDumpable(); err != nil {
		return nil, err
	}
	if !ok {
		return keys, nil
	}
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q is not the pipe tinypi passes its keys through", keysFDVar, fdText)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil, fmt.Errorf("%s=%q is not the pipe tinypi passes its keys through", keysFDVar, fdText)
	}
	f := os.NewFile(uintptr(fd), "keys")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeysBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the keys from their pipe: %w", err)
	}
	if len(data) > maxKeysBytes || json.Unmarshal(data, &keys) != nil {
		return nil, errors.New("the keys' pipe does not hold what tinypi wrote into it")
	}
	for name := range keys {
		if !isKeyVar(name) {
			return nil, fmt.Errorf("the keys' pipe holds %q, which is not a key", name)
		}
	}
	return keys, nil
}

// notDumpable makes the process not dumpable (prctl PR_SET_DUMPABLE 0): its /proc files belong
// to root, and a process of the same user can neither ptrace it nor read its memory.
func notDumpable() error {
	const prSetDumpable = 4
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", errno)
	}
	return nil
}
