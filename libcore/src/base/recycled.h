// What the request path makes and drops once per request, kept by the
// thread for its next request, so a warm worker asks malloc for nothing:
// Recycled, the storage of an object; ThreadSpares, values whose emptied
// containers keep their capacity.
//
//   struct sg_response_s : solgate::Recycled<sg_response_s> { ... };
//   auto* r = new sg_response_s(...);   // the thread's spare block, if any
//   delete r;                           // the block waits for the next new
//
// Only the storage is reused: constructors and destructors run as usual,
// so nothing of one request's state reaches the next. A thread keeps at
// most kKept blocks per type (the requests it served at once, at peak);
// beyond that, and for arrays or derived classes of another size, blocks
// go back to the heap. A block freed on another thread than the one that
// made it joins that thread's spares, which is as good.
#pragma once

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace solgate {

// Under AddressSanitizer nothing is recycled, so a use after free still
// lands on freed heap memory, where ASan sees it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kRecycling = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kRecycling = false;
#else
constexpr bool kRecycling = true;
#endif
#else
constexpr bool kRecycling = true;
#endif

// The thread's `V` of `Owner` (a class of this file), made on first use
// and destroyed when the thread ends, reached through a plain pointer:
// one TLS lookup and a test. libcore is a shared library, where each
// lookup is a __tls_get_addr call; a thread_local with a destructor (or
// made at run time) costs a guard test and two or three of them, every
// time. (initial-exec TLS would cost none, but nginx dlopens the module
// that needs libcore, and static TLS may be full by then.)
template <class Owner, class V>
class PerThread {
public:
    static V& Get() {
        V* value = value_;
        if (value == nullptr) {
            value = Make();
        }
        return *value;
    }

private:
    // Once per thread. A V used after its thread_local was destroyed (by
    // another thread_local's destructor) is used in place, as before.
    [[gnu::noinline, gnu::cold]] static V* Make() {
        static thread_local V owned = Owner::MakeSpares();
        value_ = &owned;
        return value_;
    }

    static inline thread_local V* value_ = nullptr;
};

template <class T, size_t kKept = 128>
class Recycled {
public:
    static void* operator new(size_t size) {
        if (void* spare = TakeSpare(size)) {
            return spare;
        }
        return ::operator new(size);
    }

    static void* operator new(size_t size, const std::nothrow_t&) noexcept {
        if (void* spare = TakeSpare(size)) {
            return spare;
        }
        return ::operator new(size, std::nothrow);
    }

    // a constructor that threw after a nothrow new
    static void operator delete(void* block, const std::nothrow_t&) noexcept {
        operator delete(block, sizeof(T));
    }

    static void operator delete(void* block, size_t size) noexcept {
        if (block == nullptr) {
            return;
        }
        if (kRecycling && size == sizeof(T)) {
            Spares& spares = ThreadSpares();
            if (spares.count < kKept) {
                spares.blocks[spares.count++] = block;
                return;
            }
        }
        ::operator delete(block);
    }

    // The blocks this thread keeps now (tests).
    static size_t SparesKept() { return ThreadSpares().count; }

private:
    static void* TakeSpare(size_t size) noexcept {
        if (!kRecycling || size != sizeof(T)) {
            return nullptr;
        }
        Spares& spares = ThreadSpares();
        return spares.count > 0 ? spares.blocks[--spares.count] : nullptr;
    }

    // Destroyed when its thread ends; a block freed on that thread after
    // that (by another thread_local's destructor) goes to the empty list
    // and is not freed, which only matters to a leak checker.
    struct Spares {
        Spares() = default;
        Spares(const Spares&) = delete;
        Spares& operator=(const Spares&) = delete;
        ~Spares() {
            while (count > 0) {
                ::operator delete(blocks[--count]);
            }
        }
        void* blocks[kKept];
        size_t count = 0;
    };

    friend class PerThread<Recycled, Spares>;
    static Spares MakeSpares() { return {}; }   // made in place (C++17)

    static Spares& ThreadSpares() {
        return PerThread<Recycled, Spares>::Get();
    }
};

// The same for a value whose containers are worth keeping (an emptied
// vector keeps its capacity): the last kKept values a thread gave back,
// handed out again, newest first; a default T when there are none.
template <class T, size_t kKept = 128>
class ThreadSpares {
public:
    static T Take() {
        std::vector<T>& spares = List();
        if (spares.empty()) {
            return T{};
        }
        T value = std::move(spares.back());
        spares.pop_back();
        return value;
    }

    // Use and GiveWith, for a value the caller builds from and into
    // another object's members: the spare is lent in place (the newest,
    // or a default T when there is none), so it is moved once, not twice,
    // on each side. Use: `use(T&)` moves out what it keeps; the spare is
    // then dropped (also when `use` throws).
    template <class F>
    static decltype(auto) Use(F&& use) {
        std::vector<T>& spares = List();
        if (spares.empty()) {
            T fresh{};
            return use(fresh);
        }
        struct Drop {
            std::vector<T>& spares;
            ~Drop() { spares.pop_back(); }
        } drop{spares};
        return use(spares.back());
    }
    // GiveWith: `fill(T&)` moves into a default T made in the list what
    // is worth keeping (nothing is kept beyond kKept).
    template <class F>
    static void GiveWith(F&& fill) {
        if (!kRecycling) {
            return;
        }
        std::vector<T>& spares = List();
        if (spares.size() < kKept) {
            fill(spares.emplace_back());
        }
    }

    static size_t Kept() { return List().size(); }

private:
    friend class PerThread<ThreadSpares, std::vector<T>>;
    static std::vector<T> MakeSpares() {
        std::vector<T> list;
        list.reserve(kKept);
        return list;
    }

    static std::vector<T>& List() {
        return PerThread<ThreadSpares, std::vector<T>>::Get();
    }
};

}  // namespace solgate
