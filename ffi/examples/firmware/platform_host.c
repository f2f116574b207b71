/* main.c on the host: lines to stdout, no stack measurement. */
#include <stdio.h>

#include "platform.h"

const char platform_name[] = "host";

void platform_write(const char *line) {
    fputs(line, stdout);
}

unsigned long platform_stack_peak(unsigned long *stack_size) {
    *stack_size = 0;
    return 0;
}
