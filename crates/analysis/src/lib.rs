//! Analyses over the scheduling model: statistics and checks returning plain data.
