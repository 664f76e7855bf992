//! Reading trace.dat files: the file header, options and v7 sections, the metadata (header
//! page and event, event formats, kallsyms, printk formats, cmdlines), each CPU's
//! ring-buffer data in blocks, walked page by page and record by record with timestamp
//! corrections, and events with typed field access, merged across CPUs and buffers into
//! one stream ([`trace::Trace`], the friendly API).

pub(crate) mod blocks;
pub(crate) mod cursor;
pub(crate) mod event;
pub mod format;
pub(crate) mod formats;
pub(crate) mod input;
pub(crate) mod metadata;
pub mod options;
pub mod ringbuf;
pub(crate) mod source;
pub(crate) mod symbols;
pub(crate) mod timestamps;
pub(crate) mod trace;
