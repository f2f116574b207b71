/* What main.c needs from where it runs: startup_cm4.c (Cortex-M4F under
   QEMU, semihosting) or platform_host.c (a host program, stdio). */
#ifndef QNMC_FIRMWARE_PLATFORM_H
#define QNMC_FIRMWARE_PLATFORM_H

/* Writes one line of text (`line` ends with '\n'). */
void platform_write(const char *line);

/* Peak stack use so far in bytes, and the stack's size; 0 where not measured
   (the host). */
unsigned long platform_stack_peak(unsigned long *stack_size);

/* A name for the log's first line. */
extern const char platform_name[];

#endif
