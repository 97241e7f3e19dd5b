// What libparasim.so exports: it is built with hidden visibility, so only
// declarations marked PARASIM_API (the facade and its error types) are seen
// by a program that links it.
#pragma once

#define PARASIM_API __attribute__((visibility("default")))
