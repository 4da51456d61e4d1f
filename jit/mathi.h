/* Integer functions of the generated code, defined for every input (C
 * leaves signed overflow, division by zero and out-of-range conversions
 * undefined; the language defines them: jit/ops.def). Pasted verbatim in
 * front of every generated source (C and CUDA alike) and included by
 * jit/op_eval.c, so the interpreter, folding and both dialects compute the
 * same integers; it includes nothing. Wrapping +, -, * and unary - are
 * written inline by the emitter, through unsigned arithmetic.
 */
#ifndef CS_MATHI_H
#define CS_MATHI_H

/* Python's //: floored; a // 0 is 0; INT32_MIN // -1 wraps to INT32_MIN. */
CS_INLINE int cs_idiv(int a, int b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return (int)(0u - (unsigned int)a);
    int q = a / b;
    return q - ((a % b != 0) & ((a < 0) != (b < 0)));
}

/* Python's %: the sign of the divisor; a % 0 is a. */
CS_INLINE int cs_imod(int a, int b)
{
    if (b == 0)
        return a;
    if (b == -1)
        return 0;
    int r = a % b;
    return r + ((r != 0) & ((r < 0) != (b < 0))) * b;
}

/* |a|, wrapping at INT32_MIN. */
CS_INLINE int cs_iabs(int a) { return a < 0 ? (int)(0u - (unsigned int)a) : a; }

/* A real to i32: toward zero, NaN 0, past the range its nearest end. */
CS_INLINE int cs_f2i(double x)
{
    return x != x ? 0 : x >= 2147483647.0 ? 2147483647 : x <= -2147483648.0 ? (-2147483647 - 1) : (int)x;
}

CS_INLINE int cs_f2if(float x)
{
    return x != x ? 0 : x >= 2147483648.0f ? 2147483647 : x <= -2147483648.0f ? (-2147483647 - 1) : (int)x;
}

/* A 32-bit random word to [0, n): (bits * n) >> 32 (Lemire's multiply,
 * without the rejection step: a bias below n / 2^32); 0 for n <= 0. */
CS_INLINE int cs_bounded(unsigned int bits, int n)
{
    return n > 0 ? (int)(((unsigned long long)bits * (unsigned int)n) >> 32) : 0;
}

#endif
