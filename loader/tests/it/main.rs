//! The loader's tests, one binary.
