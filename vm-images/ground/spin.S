/* A multiboot (v1) "kernel" for L2 test domains: every vCPU spins forever.
 * QEMU loads it in 32-bit protected mode (flat segments, paging off). The BSP puts a
 * real-mode `jmp $` at 0x8000, sends INIT then twice STARTUP (vector 0x08 -> 0x8000) to all
 * other CPUs through the local APIC's ICR, then spins itself. */
    .section .text
    .code32
    .globl _start
    .align 4
mb_header:
    .long 0x1BADB002            /* magic */
    .long 0                     /* flags */
    .long -(0x1BADB002)         /* checksum */
_start:
    cli
    movw $0xFEEB, 0x8000        /* EB FE: jmp $ (real mode, for the APs) */
    movl $0x000C4500, 0xFEE00300 /* INIT, all excluding self */
    movl $200000, %ecx
1:  loop 1b
    movl $0x000C4608, 0xFEE00300 /* STARTUP, vector 0x08 */
    movl $200000, %ecx
2:  loop 2b
    movl $0x000C4608, 0xFEE00300 /* STARTUP again, as the MP spec says */
spin:
    jmp spin
