/* torch.nn.init (tg_nn_layers.h): in-place initialisers with PyTorch's formulas for the bounds
 * and standard deviations, drawn from the default generator with grad mode off. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_private.h"
#include "ops/copy.h"
#include "ops/fill.h"
#include "ops/normal.h"
#include "ops/rand.h"
#include "ops/uniform.h"
#include "ops/view.h"

int tg_nn_init_uniform_(tg_tensor *t, double a, double b)
{
    int rc = -1;
    TG__NN_OWN rc = tg_drop(tg_uniform_(t, .from = a, .to = b));
    return rc;
}

int tg_nn_init_normal_(tg_tensor *t, double mean, double std)
{
    int rc = -1;
    TG__NN_OWN rc = tg_drop(tg_normal_(t, .mean = mean, .std = std));
    return rc;
}

int tg_nn_init_constant_(tg_tensor *t, double value)
{
    int rc = -1;
    TG__NN_OWN rc = tg_drop(tg_fill_(t, value));
    return rc;
}

int tg_nn_init_zeros_(tg_tensor *t) { return tg_nn_init_constant_(t, 0); }
int tg_nn_init_ones_(tg_tensor *t) { return tg_nn_init_constant_(t, 1); }

double tg_nn_init_calculate_gain(const char *nl, double param)
{
    static const char *const unit[] = { "linear",           "conv1d",           "conv2d",
                                        "conv3d",           "conv_transpose1d", "conv_transpose2d",
                                        "conv_transpose3d", "sigmoid" };
    if (!nl) nl = "leaky_relu";
    for (size_t i = 0; i < sizeof unit / sizeof *unit; i++)
        if (strcmp(nl, unit[i]) == 0) return 1.0;
    if (strcmp(nl, "tanh") == 0) return 5.0 / 3;
    if (strcmp(nl, "relu") == 0) return sqrt(2.0);
    if (strcmp(nl, "leaky_relu") == 0) return sqrt(2.0 / (1 + param * param));
    if (strcmp(nl, "selu") == 0) return 3.0 / 4;
    tg_set_error("calculate_gain", "Unsupported nonlinearity %s", nl);
    return -1;
}

int tg_nn_init_fans(const tg_tensor *t, int64_t *fan_in, int64_t *fan_out)
{
    if (!t) return -1;
    int64_t d = tg_tensor_dim(t);
    if (d < 2) {
        tg_set_error("init", "Fan in and fan out can not be computed for tensor with fewer than "
                             "2 dimensions");
        return -1;
    }
    int64_t field = 1;
    for (int64_t i = 2; i < d; i++) field *= tg_tensor_size(t, i);
    *fan_in = tg_tensor_size(t, 1) * field;
    *fan_out = tg_tensor_size(t, 0) * field;
    return 0;
}

int tg_nn_init_xavier_uniform_(tg_tensor *t, double gain)
{
    int64_t in, out;
    if (tg_nn_init_fans(t, &in, &out) != 0) return -1;
    double a = gain * sqrt(2.0 / (double)(in + out)) * sqrt(3.0);
    return tg_nn_init_uniform_(t, -a, a);
}

int tg_nn_init_xavier_normal_(tg_tensor *t, double gain)
{
    int64_t in, out;
    if (tg_nn_init_fans(t, &in, &out) != 0) return -1;
    return tg_nn_init_normal_(t, 0, gain * sqrt(2.0 / (double)(in + out)));
}

/* kaiming's standard deviation: gain / sqrt(fan). */
static double kaiming_std(tg_tensor *t, double a, tg_nn_fan_mode mode, const char *nl)
{
    int64_t in, out;
    if (tg_nn_init_fans(t, &in, &out) != 0) return -1;
    double gain = tg_nn_init_calculate_gain(nl, a);
    int64_t fan = mode == TG_FAN_IN ? in : out;
    if (gain < 0) return -1;
    if (fan == 0) {
        tg_set_error("init", "Initializing zero-element tensors is a no-op");
        return -1;
    }
    return gain / sqrt((double)fan);
}

int tg_nn_init_kaiming_uniform_(tg_tensor *t, double a, tg_nn_fan_mode mode, const char *nl)
{
    double std = kaiming_std(t, a, mode, nl);
    return std < 0 ? -1 : tg_nn_init_uniform_(t, -sqrt(3.0) * std, sqrt(3.0) * std);
}

int tg_nn_init_kaiming_normal_(tg_tensor *t, double a, tg_nn_fan_mode mode, const char *nl)
{
    double std = kaiming_std(t, a, mode, nl);
    return std < 0 ? -1 : tg_nn_init_normal_(t, 0, std);
}

/* erfinv(y) for y in (-1, 1): a starting point from the logarithmic approximation of
 * erf's inverse, then Newton steps on erf(x) - y (erf' = 2/sqrt(pi) exp(-x^2)), which converge
 * to double precision in a few steps. */
static double erfinv(double y)
{
    if (y <= -1) return -INFINITY;
    if (y >= 1) return INFINITY;
    const double a = 0.147, pi = 3.14159265358979323846;
    double l = log(1 - y * y), t = 2 / (pi * a) + l / 2;
    double x = copysign(sqrt(sqrt(t * t - l / a) - t), y);
    for (int i = 0; i < 4; i++) x -= (erf(x) - y) / (2 / sqrt(pi) * exp(-x * x));
    return x;
}

static double norm_cdf(double x) { return (1 + erf(x / sqrt(2.0))) / 2; }

int tg_nn_init_trunc_normal_(tg_tensor *t, double mean, double std, double a, double b)
{
    if (!t) return -1;
    /* PyTorch's method: u ~ U(2 cdf(a') - 1, 2 cdf(b') - 1) for a', b' standardised, then
     * x = mean + std sqrt(2) erfinv(u), clamped to [a, b]. The transform runs on the host in
     * double: there is no erfinv operator. */
    int64_t n = tg_tensor_numel(t);
    double lo = 2 * norm_cdf((a - mean) / std) - 1, hi = 2 * norm_cdf((b - mean) / std) - 1;
    double *v = malloc(sizeof *v * (size_t)(n + 1));
    if (!v) {
        tg_set_error("trunc_normal_", "out of memory");
        return -1;
    }
    int rc = -1;
    TG__NN_OWN
    {
        tg_tensor *u = tg_rand(TG_INTS(n), .dtype = TG_FLOAT64);
        rc = u ? tg_tensor_to_doubles(u, v, n) : -1;
        tg_release(u);
    }
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        double x = mean + std * sqrt(2.0) * erfinv(lo + (hi - lo) * v[i]);
        v[i] = x < a ? a : x > b ? b : x;
    }
    TG__NN_OWN
    {
        tg_tensor *host = rc == 0 ? tg_tensor_from_data(v, (int64_t[]){ n }, 1, TG_FLOAT64) : NULL;
        tg_tensor *shaped =
            tg_view(host, (tg_int_list){ .len = tg_tensor_dim(t), .data = tg_tensor_sizes(t) });
        rc = shaped ? tg_drop(tg_copy_(t, shaped)) : -1;
        tg_release(shaped);
        tg_release(host);
    }
    free(v);
    return rc;
}
