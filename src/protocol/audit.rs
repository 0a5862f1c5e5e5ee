//! Audit placeholder (being written).
