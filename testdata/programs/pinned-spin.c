/*
 * pinned-spin: two CPU-bound threads that spin for a fixed time.
 *
 * Used for the fixture testdata/traces/scenario-pinned-v7zstd.dat: run under
 * `taskset -c 0` on a 2-CPU machine, both threads share CPU 0, so one of them
 * is always runnable but waiting while CPU 1 stays idle (the "overloaded core
 * next to an idle core" pathology).
 *
 * Unpinned with THREADS above the CPU count it overloads the machine
 * (overload-spin-*.dat).
 *
 * Usage: pinned-spin [MILLISECONDS [THREADS]]
 *        (default 300 ms, each thread spinning that long; 2 threads, at most 64)
 * Build: gcc -O2 -pthread -o pinned-spin pinned-spin.c
 * Trace: trace-cmd-record -e sched -v -e sched_stat_runtime -q \
 *            -o scenario-pinned-v7zstd.dat \
 *            sh -c 'sleep 1; taskset -c 0 ./pinned-spin 300'
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long spin_ms = 300;
static long threads = 2;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *spin(void *arg)
{
	volatile unsigned long x = 0;
	/* Spin on wall-clock time so the thread stays runnable throughout. */
	double end = now_ms() + spin_ms;
	(void)arg;
	while (now_ms() < end)
		for (int i = 0; i < 10000; i++)
			x += i;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];

	if (argc > 1)
		spin_ms = atol(argv[1]);
	if (argc > 2)
		threads = atol(argv[2]);
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "pinned-spin: THREADS must be 1 to 64\n");
		return 2;
	}
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, spin, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
