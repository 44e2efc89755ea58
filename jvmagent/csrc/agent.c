/*
 * cctop's JVMTI agent: it writes the JVM's compiled code, with the
 * inlining the JIT did, to /tmp/jit-PID.dump as perf's jitdump format
 * (linux's tools/perf/Documentation/jitdump-specification.txt) defines it,
 * plus one record of cctop's own (jit/format.go):
 *
 *   JIT_CODE_INLINE (0x63630001), before the JIT_CODE_LOAD of its code:
 *     u64 code_addr, u64 nr_entry, then nr_entry entries of
 *       u64 pc, u32 depth, depth frames (innermost first) of
 *         u32 line, name (NUL-terminated), source file (NUL-terminated)
 *     padded with zeros to a multiple of 8 bytes.
 *
 * perf skips record types it does not know (util/jitdump.c warns
 * "unknown record type" and reads past it).
 *
 * Loaded with -agentpath:PATH at the JVM's start, or attached with
 * jcmd PID JVMTI.agent_load PATH (then the code compiled before is asked
 * for again). Every record is written with one write(2) under a mutex, so
 * a reader sees whole records in file order as they come.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jvmti.h>
#include <jvmticmlr.h>

#define JIT_MAGIC 0x4A695444u
#define JIT_VERSION 1u
#define JIT_CODE_LOAD 0u
#define JIT_CODE_DEBUG_INFO 2u
#define JIT_CODE_INLINE 0x63630001u

/* Bounds: of a name, of an inline chain's depth. */
#define MAX_NAME 1024
#define MAX_DEPTH 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static uint64_t code_index;
static int started;

static uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* buf is a growing byte buffer; a failed allocation marks it bad. */
struct buf {
	char *b;
	size_t len, cap;
	int bad;
};

static void put(struct buf *b, const void *p, size_t n) {
	if (b->bad)
		return;
	if (b->len + n > b->cap) {
		size_t c = b->cap ? b->cap : 4096;
		while (c < b->len + n)
			c *= 2;
		char *nb = realloc(b->b, c);
		if (nb == NULL) {
			b->bad = 1;
			return;
		}
		b->b = nb;
		b->cap = c;
	}
	memcpy(b->b + b->len, p, n);
	b->len += n;
}

static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void putstr(struct buf *b, const char *s) {
	size_t n = s ? strnlen(s, MAX_NAME) : 0;
	if (n)
		put(b, s, n);
	put(b, "", 1);
}

/* begin starts a record; end sets its size, padded to 8 bytes. */
static size_t begin(struct buf *b, uint32_t id, uint64_t ts) {
	size_t at = b->len;
	put32(b, id);
	put32(b, 0);
	put64(b, ts);
	return at;
}

static void end(struct buf *b, size_t at, int pad) {
	static const char zeros[8];
	if (pad && b->len % 8)
		put(b, zeros, 8 - b->len % 8);
	if (!b->bad) {
		uint32_t size = (uint32_t)(b->len - at);
		memcpy(b->b + at + 4, &size, 4);
	}
}

/* emit writes the buffer whole, or nothing more once a write failed. */
static void emit(struct buf *b) {
	size_t off = 0;
	if (b->bad || fd < 0)
		return;
	while (off < b->len) {
		ssize_t n = write(fd, b->b + off, b->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			fd = -1;
			return;
		}
		off += (size_t)n;
	}
}

/* jtype appends the Java form of the field descriptor at *sig (int,
 * java.lang.String, long[]) and advances past it. */
static void jtype(struct buf *b, const char **sig) {
	int dims = 0;
	const char *s = *sig;
	const char *name = NULL;
	while (*s == '[') {
		dims++;
		s++;
	}
	switch (*s) {
	case 'B': name = "byte"; break;
	case 'C': name = "char"; break;
	case 'D': name = "double"; break;
	case 'F': name = "float"; break;
	case 'I': name = "int"; break;
	case 'J': name = "long"; break;
	case 'S': name = "short"; break;
	case 'Z': name = "boolean"; break;
	case 'V': name = "void"; break;
	case 'L': {
		s++;
		while (*s && *s != ';') {
			put(b, *s == '/' ? "." : s, 1);
			s++;
		}
		break;
	}
	default:
		*sig = s; /* malformed: stop here */
		return;
	}
	if (name)
		put(b, name, strlen(name));
	if (*s)
		s++;
	while (dims-- > 0)
		put(b, "[]", 2);
	*sig = s;
}

/* class_name appends the class signature "Lpkg/Name;" as pkg.Name. */
static void class_name(struct buf *b, const char *csig) {
	const char *s = csig;
	if (s[0] == 'L') {
		jtype(b, &s);
		return;
	}
	put(b, csig, strnlen(csig, MAX_NAME));
}

/* method is what the agent knows of one method: its name as HotSpot's
 * perf map writes it ("long Hot.mix(long)"), its source file and line
 * table. */
struct method {
	jmethodID id;
	char *name;
	char *file;
	jvmtiLineNumberEntry *lines;
	jint nlines;
};

static void describe(jvmtiEnv *jvmti, jmethodID id, struct method *m) {
	char *name = NULL, *sig = NULL, *csig = NULL, *src = NULL;
	jclass klass = NULL;
	struct buf b = {0};
	memset(m, 0, sizeof *m);
	m->id = id;
	if ((*jvmti)->GetMethodName(jvmti, id, &name, &sig, NULL) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetMethodDeclaringClass(jvmti, id, &klass) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) == JVMTI_ERROR_NONE) {
		const char *ret = strchr(sig, ')');
		const char *p = sig + 1;
		if (ret) {
			ret++;
			jtype(&b, &ret);
			put(&b, " ", 1);
		}
		class_name(&b, csig);
		put(&b, ".", 1);
		put(&b, name, strnlen(name, MAX_NAME));
		put(&b, "(", 1);
		for (int i = 0; *p && *p != ')' && i < 256; i++) {
			const char *q = p;
			if (i > 0)
				put(&b, ", ", 2);
			jtype(&b, &p);
			if (p == q)
				break;
		}
		put(&b, ")", 1);
		put(&b, "", 1);
		if (!b.bad && b.len > MAX_NAME)
			b.b[MAX_NAME] = 0;
		if (!b.bad)
			m->name = b.b;
		else
			free(b.b);
		if ((*jvmti)->GetSourceFileName(jvmti, klass, &src) == JVMTI_ERROR_NONE && src) {
			m->file = strdup(src);
			(*jvmti)->Deallocate(jvmti, (unsigned char *)src);
		}
	}
	if ((*jvmti)->GetLineNumberTable(jvmti, id, &m->nlines, &m->lines) != JVMTI_ERROR_NONE) {
		m->lines = NULL;
		m->nlines = 0;
	}
	if (name)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	if (sig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	if (csig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
}

static void forget(jvmtiEnv *jvmti, struct method *m) {
	free(m->name);
	free(m->file);
	if (m->lines)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)m->lines);
}

/* line is the source line of bytecode index bci: the entry with the
 * largest start at or below it. */
static uint32_t line_of(const struct method *m, jint bci) {
	jint best = -1;
	uint32_t line = 0;
	for (jint i = 0; i < m->nlines; i++) {
		jint at = (jint)m->lines[i].start_location;
		if (at <= bci && at > best) {
			best = at;
			line = (uint32_t)m->lines[i].line_number;
		}
	}
	return line;
}

/* methods caches what one event's chains name: a compiled method inlines
 * a handful of methods, named again at every pc. Each is allocated on its
 * own, so that what lookup returned stays valid while the cache grows. */
struct methods {
	struct method **m;
	size_t n, cap;
};

static const struct method *lookup(jvmtiEnv *jvmti, struct methods *ms, jmethodID id) {
	static const struct method none;
	struct method *m;
	for (size_t i = 0; i < ms->n; i++)
		if (ms->m[i]->id == id)
			return ms->m[i];
	if (ms->n == ms->cap) {
		size_t c = ms->cap ? ms->cap * 2 : 16;
		struct method **nm = realloc(ms->m, c * sizeof *nm);
		if (nm == NULL)
			return &none;
		ms->m = nm;
		ms->cap = c;
	}
	if ((m = malloc(sizeof *m)) == NULL)
		return &none;
	describe(jvmti, id, m);
	ms->m[ms->n++] = m;
	return m;
}

static const char *or_empty(const char *s) { return s ? s : ""; }

static void JNICALL compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
					 const void *code_addr, jint map_length,
					 const jvmtiAddrLocationMap *map, const void *compile_info) {
	struct methods ms = {0};
	struct buf b = {0};
	const struct method *self;
	const jvmtiCompiledMethodLoadInlineRecord *inl = NULL;
	const jvmtiCompiledMethodLoadRecordHeader *h;
	uint64_t ts;
	(void)map_length;
	(void)map;
	if (code_size <= 0 || code_addr == NULL)
		return;
	self = lookup(jvmti, &ms, method);
	for (h = compile_info; h != NULL; h = h->next)
		if (h->kind == JVMTI_CMLR_INLINE_INFO) {
			inl = (const jvmtiCompiledMethodLoadInlineRecord *)h;
			break;
		}
	pthread_mutex_lock(&lock);
	ts = now_ns();
	if (inl != NULL && inl->numpcs > 0) {
		size_t at = begin(&b, JIT_CODE_INLINE, ts);
		uint64_t n = 0;
		size_t count;
		put64(&b, (uint64_t)(uintptr_t)code_addr);
		count = b.len;
		put64(&b, 0);
		for (jint i = 0; i < inl->numpcs; i++) {
			const PCStackInfo *pi = &inl->pcinfo[i];
			jint depth = pi->numstackframes;
			if (depth <= 0 || pi->methods == NULL)
				continue;
			if (depth > MAX_DEPTH)
				depth = MAX_DEPTH;
			put64(&b, (uint64_t)(uintptr_t)pi->pc);
			put32(&b, (uint32_t)depth);
			for (jint k = 0; k < depth; k++) {
				const struct method *m = lookup(jvmti, &ms, pi->methods[k]);
				put32(&b, line_of(m, pi->bcis ? pi->bcis[k] : 0));
				putstr(&b, or_empty(m->name));
				putstr(&b, or_empty(m->file));
			}
			n++;
		}
		if (!b.bad)
			memcpy(b.b + count, &n, 8);
		end(&b, at, 1);

		at = begin(&b, JIT_CODE_DEBUG_INFO, ts);
		put64(&b, (uint64_t)(uintptr_t)code_addr);
		put64(&b, n);
		for (jint i = 0; i < inl->numpcs; i++) {
			const PCStackInfo *pi = &inl->pcinfo[i];
			const struct method *m;
			if (pi->numstackframes <= 0 || pi->methods == NULL)
				continue;
			m = lookup(jvmti, &ms, pi->methods[0]);
			put64(&b, (uint64_t)(uintptr_t)pi->pc);
			put32(&b, line_of(m, pi->bcis ? pi->bcis[0] : 0));
			put32(&b, 0); /* discrim */
			putstr(&b, or_empty(m->file));
		}
		end(&b, at, 1);
	}
	{
		size_t at = begin(&b, JIT_CODE_LOAD, ts);
		put32(&b, (uint32_t)getpid());
		put32(&b, (uint32_t)syscall(SYS_gettid));
		put64(&b, (uint64_t)(uintptr_t)code_addr);
		put64(&b, (uint64_t)(uintptr_t)code_addr);
		put64(&b, (uint64_t)code_size);
		put64(&b, code_index++);
		putstr(&b, self->name ? self->name : "[unknown java method]");
		put(&b, code_addr, (size_t)code_size);
		end(&b, at, 0);
	}
	emit(&b);
	pthread_mutex_unlock(&lock);
	free(b.b);
	for (size_t i = 0; i < ms.n; i++) {
		forget(jvmti, ms.m[i]);
		free(ms.m[i]);
	}
	free(ms.m);
}

static void JNICALL dynamic_code_generated(jvmtiEnv *jvmti, const char *name, const void *address,
					   jint length) {
	struct buf b = {0};
	size_t at;
	(void)jvmti;
	if (length <= 0 || address == NULL)
		return;
	pthread_mutex_lock(&lock);
	at = begin(&b, JIT_CODE_LOAD, now_ns());
	put32(&b, (uint32_t)getpid());
	put32(&b, (uint32_t)syscall(SYS_gettid));
	put64(&b, (uint64_t)(uintptr_t)address);
	put64(&b, (uint64_t)(uintptr_t)address);
	put64(&b, (uint64_t)length);
	put64(&b, code_index++);
	putstr(&b, name ? name : "[stub]");
	put(&b, address, (size_t)length);
	end(&b, at, 0);
	emit(&b);
	pthread_mutex_unlock(&lock);
	free(b.b);
}

/* open_dump creates /tmp/jit-PID.dump, writes its header and maps it
 * executable: the marker by which perf and cctop find it. */
static int open_dump(void) {
	char path[64];
	struct buf b = {0};
	long page = sysconf(_SC_PAGESIZE);
	void *marker;
	snprintf(path, sizeof path, "/tmp/jit-%d.dump", (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "cctop jvmti agent: %s: %s\n", path, strerror(errno));
		return -1;
	}
	put32(&b, JIT_MAGIC);
	put32(&b, JIT_VERSION);
	put32(&b, 40);
#if defined(__x86_64__)
	put32(&b, 62);
#elif defined(__aarch64__)
	put32(&b, 183);
#else
	put32(&b, 0);
#endif
	put32(&b, 0);
	put32(&b, (uint32_t)getpid());
	put64(&b, now_ns());
	put64(&b, 0);
	emit(&b);
	free(b.b);
	if (fd < 0)
		return -1;
	marker = mmap(NULL, page > 0 ? (size_t)page : 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (marker == MAP_FAILED)
		fprintf(stderr, "cctop jvmti agent: cannot map %s executable (%s): profilers will not find it\n",
			path, strerror(errno));
	return 0;
}

static int start(JavaVM *vm, int attach) {
	jvmtiEnv *jvmti = NULL;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	jvmtiError err;
	pthread_mutex_lock(&lock);
	if (started) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	started = 1;
	pthread_mutex_unlock(&lock);
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL) {
		fprintf(stderr, "cctop jvmti agent: no JVMTI 1.2 environment\n");
		return 0;
	}
	memset(&caps, 0, sizeof caps);
	caps.can_generate_compiled_method_load_events = 1;
	caps.can_get_source_file_name = 1;
	caps.can_get_line_numbers = 1;
	if ((err = (*jvmti)->AddCapabilities(jvmti, &caps)) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "cctop jvmti agent: AddCapabilities: error %d\n", (int)err);
		return 0;
	}
	memset(&cb, 0, sizeof cb);
	cb.CompiledMethodLoad = compiled_method_load;
	cb.DynamicCodeGenerated = dynamic_code_generated;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE)
		return 0;
	if (open_dump() != 0)
		return 0;
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL);
	if (attach) {
		/* Code compiled before the agent came. */
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	}
	return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
	(void)options;
	(void)reserved;
	return start(vm, 0);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved) {
	(void)options;
	(void)reserved;
	return start(vm, 1);
}
