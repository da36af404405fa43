! Issue 27, item 9: the rank that calls MPI_Abort writes its summary. Each of 2 ranks makes 3
! DGEMM calls; then rank 1 calls BLACS_ABORT, which is MPI_Abort (Open MPI 4.1 ends that rank
! with _exit: no atexit, no signal), while rank 0 waits for a message rank 1 never sends, until
! mpirun ends it (SIGTERM). BLACS (ScaLAPACK) is MPI here, without MPI's own headers.
program abort_check
  implicit none
  integer :: iam, nprocs, ictxt, nprow, npcol, myrow, mycol, i
  double precision :: a(8, 8), c(8, 8), never(1)

  call blacs_pinfo(iam, nprocs)
  nprow = 1
  npcol = nprocs
  call blacs_get(-1, 0, ictxt)
  call blacs_gridinit(ictxt, 'Row-major', nprow, npcol)
  call blacs_gridinfo(ictxt, nprow, npcol, myrow, mycol)
  a = 1d0
  do i = 1, 3
    call dgemm('N', 'N', 8, 8, 8, 1d0, a, 8, a, 8, 0d0, c, 8)
  end do
  print '(a, i0, a)', 'rank ', iam, ': 3 calls made'
  flush(6)
  call blacs_barrier(ictxt, 'All')
  if (iam == 1) call blacs_abort(ictxt, 3)
  call dgerv2d(ictxt, 1, 1, never, 1, 0, 1)
  call blacs_exit(0)
end program abort_check
