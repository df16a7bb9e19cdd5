//! Tests of the simulator on small PTX programs.
