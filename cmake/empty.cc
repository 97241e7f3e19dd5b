// Keeps parasim_lib a real archive while include/parasim/ has no sources of its own.
