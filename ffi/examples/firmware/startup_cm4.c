/*
 * Start-up for the C firmware on a Cortex-M4F (QEMU mps2-an386): the vector
 * table, the reset handler (FPU on, .data copied, .bss zeroed, the free stack
 * painted), semihosting output and exit code, and the stack measurement.
 * No C library start-up (-nostartfiles), no heap.
 */
#include <stdint.h>

#include "platform.h"

int main(void);

/* From link.ld. */
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _stack_bottom, _stack_top;

#define STACK_PAINT 0xCCCCCCCCu
#define SYS_WRITE0 0x04u
#define SYS_EXIT 0x18u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u /* QEMU exits with 0 */
#define ADP_STOPPED_RUNTIME_ERROR 0x20023u    /* QEMU exits with 1 */

const char platform_name[] = "thumbv7em (Cortex-M4F, mps2-an386)";

static uint32_t semihost(uint32_t op, const void *arg) {
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static void __attribute__((noreturn)) semihost_exit(uint32_t reason) {
    semihost(SYS_EXIT, (const void *)(uintptr_t)reason);
    for (;;) {
    }
}

void platform_write(const char *line) {
    semihost(SYS_WRITE0, line);
}

/* The stack runs from _stack_top down to _stack_bottom (the end of .bss);
   Reset_Handler painted it. The first word from the bottom that is no
   longer paint is the deepest the stack has reached. */
unsigned long platform_stack_peak(unsigned long *stack_size) {
    const volatile uint32_t *p = &_stack_bottom;
    while (p < &_stack_top && *p == STACK_PAINT) {
        p++;
    }
    *stack_size = (unsigned long)((uintptr_t)&_stack_top - (uintptr_t)&_stack_bottom);
    return (unsigned long)((uintptr_t)&_stack_top - (uintptr_t)p);
}

void Reset_Handler(void) {
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
    volatile uint32_t *p;
    const uint32_t *src;
    uint32_t *dst;
    uintptr_t sp;

    /* Full access to the FPU (CP10, CP11) before any float instruction. */
    *cpacr |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    for (src = &_sidata, dst = &_sdata; dst < &_edata;) {
        *dst++ = *src++;
    }
    for (dst = &_sbss; dst < &_ebss;) {
        *dst++ = 0;
    }
    /* Paint the free stack, up to 64 bytes below this frame. */
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (p = &_stack_bottom; (uintptr_t)p < sp - 64; p++) {
        *p = STACK_PAINT;
    }
    semihost_exit(main() == 0 ? ADP_STOPPED_APPLICATION_EXIT : ADP_STOPPED_RUNTIME_ERROR);
}

/* Any fault or unexpected interrupt (including the Rust library's panic trap,
   `udf`, a HardFault): say so and exit with 1. */
void Default_Handler(void) {
    platform_write("FAIL: fault or unexpected exception\n");
    semihost_exit(ADP_STOPPED_RUNTIME_ERROR);
}

typedef void (*vector)(void);

/* The initial stack pointer, then the 15 system exceptions. */
__attribute__((section(".vectors"), used)) static const vector vectors[16] = {
    (vector)(uintptr_t)&_stack_top,
    Reset_Handler,
    Default_Handler, /* NMI */
    Default_Handler, /* HardFault */
    Default_Handler, /* MemManage */
    Default_Handler, /* BusFault */
    Default_Handler, /* UsageFault */
    0,
    0,
    0,
    0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMonitor */
    0,
    Default_Handler, /* PendSV */
    Default_Handler, /* SysTick */
};
