//! Events as text, byte for byte as `trace-cmd report` prints them: the lines and the
//! symbol names they show ([`event_text`]), print formats read as libtraceevent reads them
//! ([`printfmt`]), C `printf` conversions as glibc writes them ([`cprintf`]), and the text
//! of `bprint` events ([`bprint`]).

pub(crate) mod bprint;
pub(crate) mod cprintf;
pub(crate) mod event_text;
pub(crate) mod printfmt;
