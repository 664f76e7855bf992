//! Writing trace.dat files, version 6 or 7, in either byte order: the writer that collects
//! the metadata ([`writer::TraceWriter`]), events packed into ring-buffer pages
//! ([`pagebuilder`]) from payloads built by field name ([`payload`]), each CPU's data
//! streamed through a sink into a spill file ([`sink`]), and the file laid out once every
//! size is known ([`assemble`]). It uses the reader's mirrors of the format (event
//! formats, options, the ring buffer's page layout), so both sides agree on one spec.

pub(crate) mod assemble;
pub mod pagebuilder;
pub(crate) mod payload;
pub(crate) mod sink;
pub(crate) mod writer;
