! pdgemm_check: ScaLAPACK's PDGEMM on a 1 x P process grid (one rank per column block), the
! result compared with a serial triple loop that every rank runs for its own columns.
!
! Usage: mpirun -np P pdgemm_check [N [NB]]      (defaults: N = 512, NB = 256)
!
! A(i,j) and B(i,j) are functions of the global indices, so no data is sent to build them.
! Rank 0 prints the Frobenius norm of the error of the whole C relative to that of |A| |B|;
! every rank exits with status 1 when it is above 1e-14 (the real DGEMM gives about 3e-17,
! fp64-21 about 1e-15).
program pdgemm_check
  implicit none
  integer :: n, nb, iam, nprocs, ictxt, nprow, npcol, myrow, mycol, info
  integer :: mloc, nloc, il, jl, i, j, p
  integer :: desc(9)
  integer, external :: numroc, indxl2g
  double precision, allocatable :: a(:, :), b(:, :), c(:, :)
  double precision :: sums(3), s, sabs, err, err_c
  character(len=32) :: arg

  n = 512
  nb = 256
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) nb
  end if

  call blacs_pinfo(iam, nprocs)
  nprow = 1
  npcol = nprocs
  call blacs_get(-1, 0, ictxt)
  call blacs_gridinit(ictxt, 'Row-major', nprow, npcol)
  call blacs_gridinfo(ictxt, nprow, npcol, myrow, mycol)

  mloc = numroc(n, nb, myrow, 0, nprow)
  nloc = numroc(n, nb, mycol, 0, npcol)
  call descinit(desc, n, n, nb, nb, 0, 0, ictxt, max(1, mloc), info)
  if (info /= 0) then
    print '(a,i0)', 'pdgemm_check: descinit failed, info=', info
    error stop 1
  end if
  allocate (a(max(1, mloc), max(1, nloc)), b(max(1, mloc), max(1, nloc)), &
            c(max(1, mloc), max(1, nloc)))
  do jl = 1, nloc
    j = indxl2g(jl, nb, mycol, 0, npcol)
    do il = 1, mloc
      i = indxl2g(il, nb, myrow, 0, nprow)
      a(il, jl) = aval(i, j)
      b(il, jl) = bval(i, j)
    end do
  end do
  c = 0d0

  call pdgemm('N', 'N', n, n, n, 1d0, a, 1, 1, desc, b, 1, 1, desc, 0d0, c, 1, 1, desc)

  ! This rank's share of |C - C_serial|^2, (|A| |B|)^2 and |C_serial|^2, then the sums over
  ! all ranks. The error is measured against |A| |B| (the scale of GEMM's rounding bound):
  ! C itself may be smaller where its terms cancel.
  sums = 0d0
  do jl = 1, nloc
    j = indxl2g(jl, nb, mycol, 0, npcol)
    do il = 1, mloc
      i = indxl2g(il, nb, myrow, 0, nprow)
      s = 0d0
      sabs = 0d0
      do p = 1, n
        s = s + aval(i, p) * bval(p, j)
        sabs = sabs + abs(aval(i, p) * bval(p, j))
      end do
      sums(1) = sums(1) + (c(il, jl) - s)**2
      sums(2) = sums(2) + sabs**2
      sums(3) = sums(3) + s**2
    end do
  end do
  call dgsum2d(ictxt, 'All', ' ', 3, 1, sums, 3, -1, -1)
  err = sqrt(sums(1)) / sqrt(sums(2))
  err_c = sqrt(sums(1)) / sqrt(sums(3))
  if (iam == 0) print '(a,i0,a,i0,a,i0,a,es9.2,a,es9.2,a)', 'pdgemm_check: ranks=', nprocs, &
    ' n=', n, ' nb=', nb, ' err/|A||B|=', err, ' (err/|C|=', err_c, ')', &
    merge(' ok  ', ' FAIL', err <= 1d-14)

  call blacs_gridexit(ictxt)
  call blacs_exit(0)
  ! Written so that a NaN error fails.
  if (.not. (err <= 1d-14)) error stop 1

contains

  double precision function aval(i, j)
    integer, intent(in) :: i, j
    aval = sin(0.37d0 * i + 0.11d0 * j) + 1d0 / (i + j)
  end function aval

  double precision function bval(i, j)
    integer, intent(in) :: i, j
    bval = cos(0.23d0 * i - 0.41d0 * j) - 0.5d0 / (i + 2 * j)
  end function bval

end program pdgemm_check
