/* NVML, opened with dlopen where the driver has it (libnvidia-ml.so.1): the device's clocks,
 * clock event reasons, temperature, power, energy counter, and locking its SM clocks. The
 * toolkit has no nvml.h: the few functions used are declared by their C ABI in nvml.c. Every
 * function answers false (or nothing) where NVML is missing or refuses; none raises. */
#ifndef WL_NVML_H
#define WL_NVML_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>

/* The NVML device of wlrun's CUDA device (by PCI bus id), opened once; false without NVML. */
bool wl_nvml_ready(lua_State *L);

/* Begins opening NVML on a thread of its own (the library and nvmlInit, no device needed), for
 * the first wl_nvml_ready to find done: called as the CUDA context is made. With bus (the CUDA
 * device's PCI bus id, or NULL), the thread also finds that device's handle and maximum clock,
 * which took the first wl_nvml_ready 12-16 ms more on an H200. */
void wl_nvml_start(const char *bus);

/* At the process's end: waits for wl_nvml_start's thread, at most seconds; true once it is done
 * (or was never started), false while it still works. */
bool wl_nvml_finish(int seconds);
enum { WL_NVML_EXIT_WAIT_S = 2 }; /* what the process's end gives it: nvmlInit takes 20 ms */

bool wl_nvml_sm_mhz(unsigned *mhz);          /* the current SM clock */
bool wl_nvml_max_sm_mhz(unsigned *mhz);      /* the highest SM clock */
bool wl_nvml_default_sm_mhz(unsigned *mhz);  /* the default applications clock (base) */
bool wl_nvml_reasons(unsigned long long *r); /* clock event (throttle) reasons, NVML's bits */
bool wl_nvml_temperature(unsigned *c);
bool wl_nvml_power_mw(unsigned *mw);
bool wl_nvml_energy_mj(unsigned long long *mj); /* total energy since the driver loaded */

/* Names of the reasons that slow the clock down, in order; n at most WL_NVML_REASONS. A power
 * cap is one (sw_power_cap); throttled_only leaves it out (the steady state of heavy work). */
enum { WL_NVML_REASONS = 5 };
int wl_nvml_reason_names(unsigned long long reasons, bool throttled_only, const char **names);

/* Locks the SM clock to [min, max] MHz; on refusal, NVML's reason in why. Locked clocks are
 * reset when the process exits (atexit), and by wl_nvml_unlock_clocks. */
bool wl_nvml_lock_clocks(unsigned min_mhz, unsigned max_mhz, char *why, size_t whylen);
void wl_nvml_unlock_clocks(void);

#endif
