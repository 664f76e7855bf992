//! Recording scheduler traces straight from tracefs, without trace-cmd.
