/* core.h - what every room of panocap's kernels shares (core/, the demosaic
 * family in kernels/, render/, the device layer in device/) and the modules
 * above them: the error codes and the frame-size limits. The picture type
 * and its helpers are in picture.h, the CPU thread pool in pool.h, the GPU
 * device context in gpu.h.
 *
 * Conventions: functions return 0 on success and a negative PC_E* code on
 * failure, with a human-readable message written to err (errlen bytes,
 * always NUL-terminated when errlen > 0; err may be NULL).
 */
#ifndef PANOCAP_CORE_H
#define PANOCAP_CORE_H

/* Error codes shared by every room. */
enum {
    PC_OK = 0,
    PC_EINVAL = -1,   /* bad argument: size, name, pointer, pitch */
    PC_ENOMEM = -2,   /* allocation failed */
    PC_EDEVICE = -3,  /* CUDA (or other device) call failed */
    PC_ENOTSUP = -4,  /* not built in, or not available on this machine */
    PC_EIO = -5,      /* file or stream error */
};

/* Smallest and largest frame the spec allows (algorithms.md §1.2: W, H even,
 * at least 8; the largest radius is 3 so one reflection stays inside). */
#define PC_MIN_DIM 8
#define PC_MAX_DIM 32768

#endif
