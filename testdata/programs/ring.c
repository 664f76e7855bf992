/*
 * ring: a pipeline of threads woken in turn. A token goes round THREADS threads
 * through pipes: each thread waits for it (read), computes WORK loop iterations,
 * and hands it to the next (write), ROUNDS times round the ring. Only the
 * token's holder runs; every other thread sleeps in read(): the critical path
 * of the run goes through every hop.
 *
 * Used for the fixture testdata/traces/pipeline-record.dat (see
 * testdata/traces/README.md).
 *
 * Usage: ring [THREADS [ROUNDS [WORK]]]
 *        (defaults 4 threads, 100 rounds, 100000 iterations; 2 to 64 threads)
 * Build: gcc -O2 -pthread -o ring ring.c
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long threads = 4;
static long rounds = 100;
static long work = 100000;
static int pipes[64][2];
static volatile unsigned long sink;

static void compute(void)
{
	unsigned long x = 0;
	for (long i = 0; i < work; i++)
		x += (unsigned long)i * 2654435761u;
	sink = x;
}

static void *stage(void *arg)
{
	long self = (long)arg;
	long next = (self + 1) % threads;
	char token;
	for (long round = 0; round < rounds; round++) {
		if (read(pipes[self][0], &token, 1) != 1)
			exit(1);
		compute();
		if (write(pipes[next][1], &token, 1) != 1)
			exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t ids[64];
	if (argc > 1)
		threads = atol(argv[1]);
	if (argc > 2)
		rounds = atol(argv[2]);
	if (argc > 3)
		work = atol(argv[3]);
	if (threads < 2 || threads > 64 || rounds < 1 || work < 0) {
		fprintf(stderr, "usage: ring [THREADS [ROUNDS [WORK]]]\n");
		return 2;
	}
	for (long i = 0; i < threads; i++)
		if (pipe(pipes[i]) != 0)
			return 1;
	for (long i = 0; i < threads; i++)
		pthread_create(&ids[i], NULL, stage, (void *)i);
	if (write(pipes[0][1], "t", 1) != 1)
		return 1;
	for (long i = 0; i < threads; i++)
		pthread_join(ids[i], NULL);
	return 0;
}
