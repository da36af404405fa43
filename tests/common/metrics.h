// The paper's accuracy metrics (Eqs. 20-21), computed once for every test and benchmark:
//   eF      = ||C - Cref||_F / ||Cref||_F            (||C - Cref||_F itself when Cref = 0)
//   escaled = max_ij |C - Cref|_ij / (|A||B|)_ij     over the entries with a nonzero bound
// A NaN difference is reported, never hidden: escaled becomes NaN (a plain max or fmax would
// skip it) and so does eF; an Inf difference makes both Inf. Complex entries use moduli.
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <vector>

namespace amxblas::test {

struct Errors {
    double eF = 0;
    double escaled = 0;
};

// Entry by entry: add(|C - Cref|_ij, |Cref_ij|, (|A||B|)_ij), then result().
class ErrorMetrics {
public:
    void add(double diff, double ref, double bound) {
        num_ += diff * diff;
        den_ += ref * ref;
        if (!(diff <= HUGE_VAL)) nonfinite_ = true;
        else if (bound > 0 && diff / bound > escaled_) escaled_ = diff / bound;
    }
    Errors result() const {
        Errors e;
        e.eF = den_ > 0 ? std::sqrt(num_ / den_) : std::sqrt(num_);
        e.escaled = nonfinite_ ? NAN : escaled_;
        return e;
    }

private:
    double num_ = 0, den_ = 0, escaled_ = 0;
    bool nonfinite_ = false;
};

template <typename T>
double magnitude(T x) {
    return std::fabs(double(x));
}
template <typename R>
double magnitude(std::complex<R> x) {
    return std::abs(std::complex<double>(x));
}
template <typename T>
double difference(T c, T ref) {
    return std::fabs(double(c) - double(ref));
}
template <typename R>
double difference(std::complex<R> c, std::complex<R> ref) {
    return std::abs(std::complex<double>(c) - std::complex<double>(ref));
}

// C against a full reference of the same layout; bound[i] = (|A||B|) at entry i.
template <typename T>
Errors errors(const std::vector<T>& c, const std::vector<T>& ref, const std::vector<double>& bound) {
    ErrorMetrics m;
    for (std::size_t i = 0; i < c.size(); ++i) m.add(difference(c[i], ref[i]), magnitude(ref[i]), bound[i]);
    return m.result();
}

}  // namespace amxblas::test
