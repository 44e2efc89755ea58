// Package python reads CPython's own stacks out of a running interpreter's
// memory, as py-spy and austin do: where the interpreter keeps its runtime
// state (_PyRuntime, found through the dynamic symbol table, which even a
// stripped distribution build keeps), the layout of its thread states,
// frames and code objects for each version (tables for 3.9–3.12 from their
// headers, the interpreter's own _Py_DebugOffsets from 3.13), each thread's
// chain of frames with the code object, qualified name, file and line of
// each, and a poller that reads the threads that run, close to the kernel's
// samples, and keeps what it read by time for the engine to merge with the
// samples' native stacks.
//
// The target's memory is untrusted input: every read is bounded, frame
// chains are walked a bounded number of steps, and nothing is allocated by
// a size the target states. The memory is read with process_vm_readv,
// behind the Memory interface, so that unit tests run on recorded images
// of each version's memory.
package python
