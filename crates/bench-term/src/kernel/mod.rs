//! A client for the REPL kernel wire protocol (version 3).
