/*
 * barrier: two threads that repeatedly do a short computation and then meet
 * at a pthread barrier (a bulk-synchronous loop, as in the schedgraph paper).
 *
 * Used for the fixture testdata/traces/scenario-barrier-v7zstd.dat: run
 * unpinned on a 2-CPU machine, each round both threads compute, the first to
 * finish blocks in pthread_barrier_wait (futex) and is woken by the second.
 * The threads take turns being the slower one, so both sleep and wake about
 * every other round, giving many sleep/wakeup/placement decisions.
 *
 * With THREADS above 2 (and `taskset -c 0` on a 2-CPU machine) the threads
 * take turns on one CPU: many short waits while the other CPU idles
 * (barrier-pinned-*.dat).
 *
 * Usage: barrier [ROUNDS [WORK [THREADS]]]
 *        (defaults 300 rounds, 200000 iterations, 2 threads; at most 64)
 * Build: gcc -O2 -pthread -o barrier barrier.c
 * Trace: trace-cmd-record -e sched -v -e sched_stat_runtime -q \
 *            -o scenario-barrier-v7zstd.dat sh -c 'sleep 1; ./barrier 300'
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t barrier;
static long rounds = 300;
static long work = 200000;
static long threads = 2;

static void *worker(void *arg)
{
	volatile unsigned long x = 0;
	long id = (long)arg;

	for (long r = 0; r < rounds; r++) {
		/*
		 * Uneven work: the threads take turns being the slow one, so
		 * each of them blocks at the barrier in every other round.
		 */
		long n = work + ((r + id) % threads == 0) * (work / 5);
		for (long i = 0; i < n; i++)
			x += i ^ r;
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		work = atol(argv[2]);
	if (argc > 3)
		threads = atol(argv[3]);
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "barrier: THREADS must be 1 to 64\n");
		return 2;
	}
	pthread_barrier_init(&barrier, NULL, threads);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier);
	return 0;
}
