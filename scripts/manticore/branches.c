/* A small target for Manticore (scripts/test-manticore-native.sh): reads 8 bytes from stdin and
 * branches on them in nested ways (equality with a magic prefix checked in a loop, an XOR of two
 * bytes, an unsigned comparison, a sum over a loop of 4 bytes, a remainder, a chain of
 * comparisons), so that symbolic execution finds 10 paths, each printing its own line and exiting
 * with its own status.
 *
 * Freestanding on purpose (no libc; build with gcc -static -O0 -nostdlib -ffreestanding): glibc's
 * static start-up code (2.35 and later) makes the rseq system call, which Manticore 0.3.7's Linux
 * model does not know (its dispatcher fails with "hasattr(): attribute name must be string"), and
 * emulating libc's start-up would cost most of the run anyway. */

static long sys3(long n, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return r;
}

static int say(const char *s, int status) {
    long n = 0;
    while (s[n])
        n++;
    sys3(1 /* write */, 1, (long)s, n);
    return status;
}

static int run(void) {
    static const unsigned char magic[] = "AGI";
    unsigned char b[8];
    unsigned sum = 0;
    int i;

    for (i = 0; i < 8; i++)
        b[i] = 0;
    if (sys3(0 /* read */, 0, (long)b, 8) != 8)
        return say("short\n", 1);

    if (b[0] == 'M') {
        for (i = 0; i < 3; i++)
            if (b[1 + i] != magic[i])
                break;
        if (i == 0)
            return say("prefix-0\n", 10);
        if (i == 1)
            return say("prefix-1\n", 11);
        if (i == 2)
            return say("prefix-2\n", 12);
        if ((b[4] ^ b[5]) == 0x5a)
            return say("magic-xor\n", 20);
        return say("magic\n", 21);
    }
    if (b[0] < '0')
        return say("low\n", 30);
    for (i = 0; i < 4; i++)
        sum += b[4 + i];
    if (sum > 900)
        return say("heavy\n", 40);
    if ((b[0] * 3 + b[1]) % 7 == 0)
        return say("div7\n", 50);
    if (b[1] > b[2] && b[2] > b[3])
        return say("descending\n", 60);
    return say("other\n", 70);
}

void _start(void) {
    sys3(60 /* exit */, run(), 0, 0);
    for (;;) {
    }
}
