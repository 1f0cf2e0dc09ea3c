// Package proctest helps the tests that start processes and must prove that none is left
// running (a signal, a cancelled run): the process under test reports its id through a FIFO the
// test made, so the test goes on the moment the process is there, without polling or sleeping;
// and Gone tells whether a process has ended. Its functions exist on Unix only.
package proctest
