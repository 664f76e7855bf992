//! trace.dat reading and writing: the file format only, no scheduling knowledge.
