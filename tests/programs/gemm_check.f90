! gemm_check: an ordinary Fortran 90 program that calls DGEMM and SGEMM through the plain
! BLAS interface (linked with -lblas only; it knows nothing of amxblas) and checks every result
! against a triple loop in double precision.
!
! Usage: gemm_check [N]...     one round of checks per order N (default: 256)
!
! Per order: DGEMM N,N and T,N (random inputs, relative Frobenius error < 1e-14, which holds
! for the real DGEMM and for fp64-21), SGEMM N,T on small integers (exact: every value and
! partial sum is representable in BF16 slices and FP32), SGEMM N,N on random inputs (relative
! error < 1e-5). Exits with status 1 when a check fails.
program gemm_check
  implicit none
  integer :: nargs, i, n, failures
  character(len=32) :: arg

  failures = 0
  nargs = command_argument_count()
  if (nargs == 0) then
    call check_order(256, failures)
  else
    do i = 1, nargs
      call get_command_argument(i, arg)
      read (arg, *) n
      call check_order(n, failures)
    end do
  end if
  if (failures > 0) then
    print '(a,i0,a)', 'gemm_check: ', failures, ' check(s) FAILED'
    error stop 1
  end if
  print '(a)', 'gemm_check: all checks passed'

contains

  ! A reproducible uniform value in [-1, 1) from a 64-bit linear congruential generator.
  double precision function next_uniform(state)
    integer(kind=8), intent(inout) :: state
    state = state * 6364136223846793005_8 + 1442695040888963407_8
    next_uniform = dble(ishft(state, -11)) / 2d0**53 * 2d0 - 1d0
  end function next_uniform

  subroutine fill_uniform(x, state)
    double precision, intent(out) :: x(:, :)
    integer(kind=8), intent(inout) :: state
    integer :: i, j
    do j = 1, size(x, 2)
      do i = 1, size(x, 1)
        x(i, j) = next_uniform(state)
      end do
    end do
  end subroutine fill_uniform

  ! c := alpha * op(a) * op(b) + beta * c, by the definition, in double precision.
  subroutine triple_loop(ta, tb, n, alpha, a, b, beta, c)
    character, intent(in) :: ta, tb
    integer, intent(in) :: n
    double precision, intent(in) :: alpha, beta, a(n, n), b(n, n)
    double precision, intent(inout) :: c(n, n)
    double precision :: s, x, y
    integer :: i, j, p
    do j = 1, n
      do i = 1, n
        s = 0d0
        do p = 1, n
          if (ta == 'N') then
            x = a(i, p)
          else
            x = a(p, i)
          end if
          if (tb == 'N') then
            y = b(p, j)
          else
            y = b(j, p)
          end if
          s = s + x * y
        end do
        c(i, j) = alpha * s + beta * c(i, j)
      end do
    end do
  end subroutine triple_loop

  subroutine report(what, n, err, tol, failures)
    character(len=*), intent(in) :: what
    integer, intent(in) :: n
    double precision, intent(in) :: err, tol
    integer, intent(inout) :: failures
    character(len=4) :: verdict
    ! Written so that a NaN error fails.
    if (err <= tol) then
      verdict = 'ok'
    else
      verdict = 'FAIL'
      failures = failures + 1
    end if
    print '(a,a,a,i0,a,es9.2,a,es8.1,1x,a)', 'gemm_check: ', what, ' n=', n, &
      ' rel_err=', err, ' tol=', tol, trim(verdict)
  end subroutine report

  double precision function rel_error(x, ref)
    double precision, intent(in) :: x(:, :), ref(:, :)
    rel_error = sqrt(sum((x - ref)**2)) / sqrt(sum(ref**2))
  end function rel_error

  subroutine check_order(n, failures)
    integer, intent(in) :: n
    integer, intent(inout) :: failures
    external :: dgemm, sgemm
    double precision, allocatable :: a(:, :), b(:, :), c(:, :), ref(:, :)
    real, allocatable :: sa(:, :), sb(:, :), sc(:, :)
    integer(kind=8) :: state

    allocate (a(n, n), b(n, n), c(n, n), ref(n, n), sa(n, n), sb(n, n), sc(n, n))
    state = 20240601_8 + n

    ! DGEMM, no transposes, beta = 0 (C holds NaN: it must not be read).
    call fill_uniform(a, state)
    call fill_uniform(b, state)
    c = transfer(-1_8, 1d0)
    ref = 0d0
    call triple_loop('N', 'N', n, 1d0, a, b, 0d0, ref)
    call dgemm('N', 'N', n, n, n, 1d0, a, n, b, n, 0d0, c, n)
    call report('dgemm N N alpha=1 beta=0', n, rel_error(c, ref), 1d-14, failures)

    ! DGEMM, A transposed, alpha and beta not 1.
    call fill_uniform(c, state)
    ref = c
    call triple_loop('T', 'N', n, -0.5d0, a, b, 2d0, ref)
    call dgemm('T', 'N', n, n, n, -0.5d0, a, n, b, n, 2d0, c, n)
    call report('dgemm T N alpha=-0.5 beta=2', n, rel_error(c, ref), 1d-14, failures)

    ! SGEMM, B transposed, small integers: the result is exact.
    sa = real(nint(8 * a))
    sb = real(nint(8 * b))
    sc = real(nint(8 * c))
    ref = dble(sc)
    call triple_loop('N', 'T', n, 1d0, dble(sa), dble(sb), 1d0, ref)
    call sgemm('N', 'T', n, n, n, 1.0, sa, n, sb, n, 1.0, sc, n)
    call report('sgemm N T integers (exact)', n, rel_error(dble(sc), ref), 0d0, failures)

    ! SGEMM, random inputs.
    sa = real(a)
    sb = real(b)
    sc = 0.0
    ref = 0d0
    call triple_loop('N', 'N', n, 1d0, dble(sa), dble(sb), 0d0, ref)
    call sgemm('N', 'N', n, n, n, 1.0, sa, n, sb, n, 0.0, sc, n)
    call report('sgemm N N random', n, rel_error(dble(sc), ref), 1d-5, failures)

    deallocate (a, b, c, ref, sa, sb, sc)
  end subroutine check_order

end program gemm_check
