datafile = 'nvlink-domain.dat'
set terminal svg size 1000,700 dynamic background rgb 'white' font 'Sans,11'
set output 'nvlink-domain.svg'
set title 'nvlink-domain: what a larger NVLink domain (8 -> 36 -> 72 GPUs) buys a 70B and a 405B model at 2k-18k GPUs' noenhanced font ',10'
set grid
set key noenhanced below vertical font ',9'
set xlabel 'intra_node.nvlink_domain_size' noenhanced
set xtics ('8' 0, '36' 1, '72' 2)
set offsets 0.2, 0.2, 0, 0
set ylabel 'tokens/s over the series'' first point'
plot datafile index 0 using 1:2 with linespoints lw 2 pt 7 lc 1 title 'llama3-70b, nodes=576', \
     datafile index 1 using 1:2 with linespoints lw 2 pt 7 lc 2 title 'llama3-70b, nodes=4608', \
     datafile index 2 using 1:2 with linespoints lw 2 pt 7 lc 3 title 'llama3-405b, nodes=576', \
     datafile index 3 using 1:2 with linespoints lw 2 pt 7 lc 4 title 'llama3-405b, nodes=4608'
